"""A prompt the adapters' tests send, with its per-turn slot."""

from webui.prompt_types import Prompt

PROMPT = Prompt(
    conversation_id="3f1c2d4e-0000-4000-8000-000000000001",
    system_sections=("You are Pippa.",),
    history=(),
    user_text="hello",
    turn_slot=("Current time: now.",),
    user_message_id="m1",
)

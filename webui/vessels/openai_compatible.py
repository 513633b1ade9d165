"""OpenAI-compatible local servers (llama.cpp with ``--jinja``, vLLM with a tool parser, LM Studio).

The OpenAI Chat shape at the vessel's own ``base_url`` (for example ``http://127.0.0.1:8080/v1``).
There is no default endpoint, and the key is optional: sent as a bearer token when the vessel names
an environment variable that holds one.
"""

from webui.vessels.openai import OpenAIAdapter


class OpenAICompatibleAdapter(OpenAIAdapter):
    adapter_name = "openai_compatible"
    provider_name = "The OpenAI-compatible server"
    default_base_url = None
    requires_api_key = False

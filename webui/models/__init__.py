"""The household's data, one module per concept (Zulip's ``zerver/models/``): souls and vault
snapshots, vessels, members' settings, conversations and their moves between vessels, messages
and tool rounds, unattended runs, the cache ledger's vessel calls, and the processes' heartbeats.
Each model is re-exported here, so callers keep one import path.
"""

from webui.models.conversations import Conversation as Conversation
from webui.models.conversations import VesselMove as VesselMove
from webui.models.members import MemberSettings as MemberSettings
from webui.models.members import validate_time_zone as validate_time_zone
from webui.models.messages import Message as Message
from webui.models.messages import TurnRound as TurnRound
from webui.models.messages import empty_usage as empty_usage
from webui.models.process_heartbeats import ProcessHeartbeat as ProcessHeartbeat
from webui.models.souls import Soul as Soul
from webui.models.souls import VaultSnapshot as VaultSnapshot
from webui.models.unattended import DailyChore as DailyChore
from webui.models.unattended import ScheduledJob as ScheduledJob
from webui.models.unattended import UnattendedRun as UnattendedRun
from webui.models.vessel_calls import VesselCall as VesselCall
from webui.models.vessels import Vessel as Vessel
from webui.models.vessels import validate_api_key_env as validate_api_key_env

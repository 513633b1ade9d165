"""The control door (faults, direct writes, the request log) exists only with ``--control``."""

import pytest
import requests

from reference_engine.app import EngineApp
from reference_engine.server import ReferenceEngine
from tests.support.engine_calls import send, turn_event
from tests.support.engine_processes import engine_process
from tests.support.engine_token import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_the_control_door_is_404_without_control(tmp_path: str) -> None:
    engine = ReferenceEngine(token=TOKEN, database=f"{tmp_path}/engine.sqlite3").start()
    try:
        for method, path in (("GET", "/_control/requests"), ("POST", "/_control/faults")):
            answer = requests.request(method, engine.url + path, json={"mode": "down"}, timeout=5)
            assert answer.status_code == 404
        head = requests.get(engine.url + "/v1/souls/pippa/head", headers=AUTH, timeout=5)
        assert head.status_code == 200
    finally:
        engine.stop()


def test_the_engine_opens_the_control_door_only_when_told(tmp_path: str) -> None:
    database = f"{tmp_path}/engine.sqlite3"
    with engine_process(database) as (url, _):
        assert requests.get(url + "/_control/requests", timeout=5).status_code == 404
    with engine_process(database, "--control") as (url, _):
        assert requests.get(url + "/_control/requests", headers=AUTH, timeout=5).status_code == 200


def test_manage_py_memory_engine_hands_control_over_to_the_engine(tmp_path: str) -> None:
    """The alias passes ``--control`` on: the door it opens is the engine's own."""
    with engine_process(f"{tmp_path}/engine.sqlite3", "--control", alias=True) as (url, _):
        assert requests.get(url + "/_control/requests", headers=AUTH, timeout=5).status_code == 200


def test_an_engine_without_the_control_door_keeps_no_request_log(tmp_path: str) -> None:
    """The request log is read only through the door; a household's engine, up for months,
    must not keep every turn event it was sent in memory."""
    engine = ReferenceEngine(token=TOKEN, database=f"{tmp_path}/engine.sqlite3").start()
    household = EngineApp(engine.state, token=TOKEN)  # as gunicorn serves it without --control
    engine.serve(household)
    try:
        assert send(engine.url, turn_event("the bins go out on Tuesday")).status_code == 202
        assert [m.text for m in engine.state.souls["pippa"].memories] == [
            "the bins go out on Tuesday"
        ]
        assert household.log.all() == []
    finally:
        engine.stop()


def test_a_connection_the_down_fault_drops_is_closed_without_a_traceback(
    tmp_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The in-process server writes nothing for a dropped request, and says nothing either: a
    fault is the test's intent, not a server error."""
    engine = ReferenceEngine(token=TOKEN, database=f"{tmp_path}/engine.sqlite3").start()
    try:
        engine.set_fault("down")
        with pytest.raises(requests.ConnectionError):
            requests.get(engine.url + "/v1/souls/pippa/head", headers=AUTH, timeout=5)
    finally:
        engine.stop()

    assert "Traceback" not in capsys.readouterr().err

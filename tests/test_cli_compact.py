"""`cairn compact`, run as a person would against the loopback provider: it summarises, the next
`cairn chat` continues from the summary, and every failure leaves the chat as it was."""

from __future__ import annotations

from desktop.loopback import Fault, LoopbackProvider, Reply
from host.content import Checkpoint
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.cli_fixtures import KEY, cairn
from tests.recorded_requests import is_summary_request


def a_chat(provider: LoopbackProvider, turns: int) -> str:
    added = cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
    assert added.returncode == 0, added.stderr
    first = cairn("chat", "Where does the trail start?")
    assert first.returncode == 0, first.stderr
    session = first.stderr.split("session ")[1].split()[0]
    for turn in range(1, turns):
        question = f"And cairn number {turn}: who built it, how tall is it, and which trail does it mark? " * 4
        assert cairn("chat", "--session", session, question).returncode == 0
    return session


def checkpoints(paths: CairnPaths, session: str) -> list[Checkpoint]:
    with Journal.open(paths.journal) as journal:
        rows = TranscriptWriter(journal).model_order(session)
    return [m for r in rows if isinstance(m := r.meta(), Checkpoint)]


def test_compact_summarises_and_the_next_chat_continues_from_the_summary(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        session = a_chat(provider, 4)
        done = cairn("compact", "--session", session, "--focus", "the trail's start")
        assert done.returncode == 0, done.stderr
        summary_request = provider.requests[-1]
        after = cairn("chat", "--session", session, "Which way now?")
        assert after.returncode == 0, after.stderr
        next_request = provider.requests[-1]
    assert done.stdout.startswith("Earlier messages were summarised: about ")
    assert is_summary_request(summary_request)
    assert "keep especially: the trail's start" in summary_request.body["messages"][-1]["content"]
    (checkpoint,) = checkpoints(cairn_paths, session)
    assert checkpoint.reason == "manual"
    assert 0 < checkpoint.tokens_after < checkpoint.tokens_before
    assert next_request.body["messages"][1]["content"].startswith("<conversation-summary>")
    with Journal.open(cairn_paths.journal) as journal:
        kinds = [u.kind for u in UsageLedger(journal).requests(session)]
    assert kinds.count("compaction") == 1


def test_compact_refuses_what_it_cannot_do_and_changes_nothing(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        missing = cairn("compact", "--session", "no-such-session")
        assert missing.returncode == 2
        assert "There is no session no-such-session; `cairn sessions` lists them." in missing.stderr
        no_session = cairn("compact")
        assert no_session.returncode == 2
        assert "--session" in no_session.stderr
        session = a_chat(provider, 1)
        nothing = cairn("compact", "--session", session)
        assert nothing.returncode == 1
        assert "nothing was compacted. There is nothing before the latest message to summarise yet." in nothing.stderr
        assert cairn("chat", "--session", session, "More, please.").returncode == 0
        bad_focus = cairn("compact", "--session", session, "--focus", "keep this " * 300)
        assert bad_focus.returncode == 2
        assert "The focus note is 2,999 characters; keep it under 2,000" in bad_focus.stderr
        # The provider fails the summary, quoting the key back: nothing changes, no key is shown.
        provider.script(Reply(fault=Fault("echo_key")))
        failed = cairn("compact", "--session", session)
        assert failed.returncode == 1
        assert "the chat was not compacted, and nothing was changed" in failed.stderr
        assert KEY not in failed.stderr + failed.stdout
        provider.script(Reply(text=""))
        empty = cairn("compact", "--session", session)
        assert empty.returncode == 1
        assert "answered the summary request without any text" in empty.stderr
    assert "Traceback" not in missing.stderr + nothing.stderr + bad_focus.stderr + failed.stderr + empty.stderr
    assert checkpoints(cairn_paths, session) == []

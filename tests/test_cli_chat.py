"""`cairn chat`, `cairn accounts` and `cairn catalog refresh`, run as a person would, against
the loopback provider. None of them loads Qt."""

import json

import pytest

from desktop.loopback import Fault, LoopbackProvider, Reply
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.cli_fixtures import KEY, cairn

# Declared from the first request on a route that takes tools, in name order.
CORE_TOOLS = [
    "edit_file", "fetch_url", "list_folder", "load_skill", "read_file", "read_resource", "search_text", "tool_search",
    "write_file",
]  # fmt: skip


def test_chat_streams_the_answer_and_continues_a_session(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        assert (
            cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat").returncode
            == 0
        )
        provider.script(Reply(text="Cairns are stacked stones."), Reply(text="They guide walkers."))
        first = cairn("chat", "What", "is", "a", "cairn?")
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == "Cairns are stacked stones."
        assert "prompt tokens" in first.stderr
        session_id = first.stderr.split("session ")[1].split()[0]
        second = cairn("chat", "--session", session_id, stdin="What are they for?\n")
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "They guide walkers."
        roles = [m["role"] for m in provider.requests[1].body["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
    with Journal.open(cairn_paths.journal) as journal:
        rows = [r for r in TranscriptWriter(journal).rows(session_id) if r.role != "system"]
        assert [r.role for r in rows] == ["user", "assistant", "user", "assistant"]
        assert journal.session(session_id).title == "What is a cairn?"
    listed = cairn("sessions")
    assert session_id in listed.stdout


def test_a_cut_off_reply_can_be_continued(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        provider.script(Reply(text="One, two,", finish_reason="length"), Reply(text=" three."))
        cut = cairn("chat", "count")
        assert cut.returncode == 0, cut.stderr
        assert "--continue" in cut.stderr
        session_id = cut.stderr.split("--session ")[1].split()[0]
        went_on = cairn("chat", "--session", session_id, "--continue")
        assert went_on.returncode == 0, went_on.stderr
        assert went_on.stdout.strip() == "three."
        again = cairn("chat", "--session", session_id, "--continue")
        assert again.returncode == 2
        assert "nothing to continue" in again.stderr
        assert "--session" in cairn("chat", "--continue").stderr
    with Journal.open(cairn_paths.journal) as journal:
        rows = [r for r in TranscriptWriter(journal).rows(session_id) if r.role != "system"]
        assert [r.role for r in rows] == ["user", "assistant", "user", "assistant"]
        assert rows[2].body().continues == rows[1].id


def test_a_failed_chat_can_be_retried(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        provider.script(Reply(fault=Fault("html")))
        failed = cairn("chat", "hello")
        assert failed.returncode == 1
        assert "HTML page" in failed.stderr
        assert "--retry" in failed.stderr
        session_id = failed.stderr.split("--session ")[1].split()[0]
        provider.script(Reply(text="Here now."))
        retried = cairn("chat", "--session", session_id, "--retry")
        assert retried.returncode == 0, retried.stderr
        assert retried.stdout.strip() == "Here now."
        again = cairn("chat", "--session", session_id, "--retry")
        assert again.returncode == 2
        assert "nothing to retry" in again.stderr


def test_accounts_list_edit_remove_and_bad_input(cairn_paths: CairnPaths) -> None:
    assert "No accounts yet" in cairn("accounts", "list").stdout
    bad = cairn("accounts", "add", "X", "--base-url", "not a url", "--model", "m")
    assert bad.returncode == 2
    assert "is not an http:// or https:// URL" in bad.stderr
    unknown = cairn("accounts", "add", "X", "--provider", "nowhere")
    assert "Unknown provider 'nowhere'" in unknown.stderr
    assert cairn("accounts", "add", "Deep", "--provider", "deepseek", stdin="\n").returncode == 0
    assert cairn("accounts", "edit", "Deep", "--model", "deepseek-reasoner", "--rename", "DS").returncode == 0
    listed = cairn("accounts", "list").stdout
    assert "DS (default): deepseek, deepseek-reasoner at https://api.deepseek.com" in listed
    assert cairn("accounts", "remove", "DS").returncode == 0
    assert "No accounts yet" in cairn("accounts", "list").stdout


def test_chat_without_an_account_says_how_to_add_one() -> None:
    done = cairn("chat", "hi")
    assert done.returncode == 2
    assert "cairn accounts add" in done.stderr


def test_catalog_refresh_offline_keeps_the_bundled_copy(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as gone:
        url = gone.base_url.replace("/v1", "/api.json")
    done = cairn("catalog", "refresh", "--url", url)
    assert done.returncode == 1
    assert "kept the previous catalog" in done.stderr
    assert not (cairn_paths.cache_dir / "models.dev.json").exists()


def test_chat_uses_the_context_engine_and_reports_invalid_skills(cairn_paths: CairnPaths, tmp_path) -> None:
    from tests.cache_scenario import write_skill

    write_skill(cairn_paths.skills_dir, "notes", "Keep notes.")
    write_skill(cairn_paths.skills_dir, "Bad-Name", "Nope.")
    workspace = tmp_path / "project"
    write_skill(workspace / ".agents" / "skills", "house-style", "Write in the house style.")
    listed = cairn("skills", "--workspace", str(workspace))
    assert "notes (user): Keep notes." in listed.stdout
    assert "house-style (workspace): Write in the house style." in listed.stdout
    assert "Bad-Name" in listed.stderr
    assert "not a valid skill name" in listed.stderr
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        done = cairn("chat", "--workspace", str(workspace), "hello")
        assert done.returncode == 0, done.stderr
        assert "1 skill was left out; `cairn skills` says why." in done.stderr
        system = provider.requests[0].body["messages"][0]
    assert system["role"] == "system"
    assert "notes: Keep notes." in system["content"]
    assert "house-style: Write in the house style." in system["content"]
    assert f"The workspace folder is {workspace}." in system["content"]
    assert [t["function"]["name"] for t in provider.requests[0].body["tools"]] == CORE_TOOLS


def test_account_options_from_the_command_line_reach_the_request(cairn_paths: CairnPaths) -> None:
    from desktop.context.projection import OPENING_TAG

    with LoopbackProvider(api_key=KEY) as provider:
        added = cairn(
            "accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat",
            "--max-output", "512", "--first-token-timeout", "300", "--instructions-in-first-message", "--no-tools",
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        listed = cairn("accounts", "list").stdout
        assert "replies up to 512 tokens" in listed
        assert "waits 300 s for the first token" in listed
        assert "instructions in the first message" in listed
        assert "no tools" in listed
        done = cairn("chat", "hello")
        assert done.returncode == 0, done.stderr
        body = provider.requests[0].body
        assert body["max_tokens"] == 512
        assert "tools" not in body
        assert [m["role"] for m in body["messages"]] == ["user"]
        assert body["messages"][0]["content"].startswith(f"<{OPENING_TAG}>")
        edited = cairn("accounts", "edit", "Loop", "--max-output", "0", "--no-instructions-in-first-message", "--tools")
        assert edited.returncode == 0, edited.stderr
        cairn("chat", "again")
        body = provider.requests[1].body
        assert "max_tokens" not in body
        assert body["messages"][0]["role"] == "system"
        assert [t["function"]["name"] for t in body["tools"]] == CORE_TOOLS


def test_a_server_without_streamed_usage_is_reported_as_such(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=KEY, stream_usage=False) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        provider.script(Reply(text="Hello there.", fault=Fault("stall", after_chunks=1, seconds=2.6)))
        done = cairn("chat", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello there."
    assert "[the model is reading the prompt… 2 s]" in done.stderr
    assert "[usage not reported · session" in done.stderr
    assert "total cost unknown (1 request without usage)]" in done.stderr
    assert "0 prompt tokens" not in done.stderr
    with Journal.open(cairn_paths.journal) as journal:
        session_id = journal.sessions()[0].id
        (usage,) = UsageLedger(journal).requests(session_id)
    assert usage.prompt_tokens is None
    assert not usage.reported


def test_tools_that_change_things_ask_and_a_pipe_denies_unless_approve(cairn_paths: CairnPaths, tmp_path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    call = '[[call write_file {"path": "notes.txt", "content": "buy stones"}]]'
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        denied = cairn("chat", "--workspace", str(workspace), f"Write it down. {call}")
        assert denied.returncode == 0, denied.stderr
        assert "nobody at a terminal to approve it; use --approve once|chat" in denied.stderr
        assert not (workspace / "notes.txt").exists()
        allowed = cairn("chat", "--workspace", str(workspace), "--approve", "once", f"Again. {call}")
        assert allowed.returncode == 0, allowed.stderr
        assert (workspace / "notes.txt").read_text() == "buy stones"
        read_only = cairn("chat", "--workspace", str(workspace), "--mode", "read-only", "--approve", "once",
                          '[[call write_file {"path": "other.txt", "content": "no"}]]')  # fmt: skip
        assert read_only.returncode == 0, read_only.stderr
        assert not (workspace / "other.txt").exists()
        results = [m["content"] for r in provider.requests for m in r.body["messages"] if m["role"] == "tool"]
    assert any("read-only" in content for content in results)


def test_continuing_a_chat_keeps_its_account_unless_another_is_asked_for(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(api_key=KEY) as first, LoopbackProvider(api_key=KEY) as second:
        assert (
            cairn("accounts", "add", "First", "--base-url", first.base_url, "--model", "loopback-chat").returncode == 0
        )
        assert (
            cairn("accounts", "add", "Second", "--base-url", second.base_url, "--model", "loopback-chat").returncode
            == 0
        )
        started = cairn("chat", "--account", "Second", "Which trail?")
        assert started.returncode == 0, started.stderr
        session_id = started.stderr.split("session ")[1].split()[0]
        assert cairn("chat", "--session", session_id, "And then?").returncode == 0
        assert cairn("compact", "--session", session_id).returncode in (0, 1)  # on Second, whatever it finds
        assert cairn("chat", "--session", session_id, "--account", "First", "Now here.").returncode == 0
        assert cairn("chat", "--session", session_id, "Still here?").returncode == 0
        to_first, to_second = len(first.requests), len(second.requests)
    assert to_first == 2  # asked for, then kept
    assert to_second >= 2


def test_an_accounts_context_is_set_and_unset_from_the_command_line(cairn_paths: CairnPaths) -> None:
    settings_file = cairn_paths.config_dir / "settings.json"
    added = cairn(
        "accounts", "add", "Small", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--context", "3000"
    )
    assert added.returncode == 0, added.stderr
    assert json.loads(settings_file.read_text())["accounts"][0]["context_limit"] == 3000
    assert "a 3,000-token context" in cairn("accounts", "list").stdout
    refused = cairn("accounts", "edit", "Small", "--context", "100")
    assert refused.returncode == 2
    assert "--context is the model's context in tokens, from 1,024; 0 unsets it." in refused.stderr
    assert cairn("accounts", "edit", "Small", "--context", "0").returncode == 0
    assert json.loads(settings_file.read_text())["accounts"][0]["context_limit"] is None


@pytest.mark.parametrize(
    "usage",
    [
        {"completion_tokens": 9223372036854775808},
        {"completion_tokens": -5},
        {"completion_tokens": 12.5},
        {"prompt_tokens": 10**30},
        {"prompt_cache_hit_tokens": 9223372036854775807},
        {"completion_tokens_details": {"reasoning_tokens": -1}},
    ],
)
def test_usage_out_of_range_is_not_reported_and_the_reply_is_kept(cairn_paths: CairnPaths, usage: dict) -> None:
    with LoopbackProvider(api_key=KEY) as provider:
        cairn("accounts", "add", "Loop", "--base-url", provider.base_url, "--model", "loopback-chat")
        provider.script(Reply(text="Hello there.", usage=usage))
        done = cairn("chat", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello there."
    assert "[usage not reported · session" in done.stderr
    with Journal.open(cairn_paths.journal) as journal:
        session_id = journal.sessions()[0].id
        (recorded,) = UsageLedger(journal).requests(session_id)
        roles = [r.role for r in TranscriptWriter(journal).rows(session_id) if r.role != "system"]
    assert roles == ["user", "assistant"]
    assert not recorded.reported

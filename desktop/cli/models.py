"""`cairn models`: the models the built-in engine runs: list, add, use, set, remove.

`add FILE` reads the GGUF's header first, so a file that is not a model, is cut short or is
of an architecture the engine does not run is refused with a sentence, and nothing changes.
`use` makes a model the Built-in account's; a chat on it starts its cache again.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop.app import CairnApp, DownloadError, LibraryError, ModelEntry
from desktop.cli.common import CommandError, printable
from desktop.cli.model_download import run_download

__all__ = ["add_models_commands", "run_models"]

MIB = 1024 * 1024


def add_models_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    models = commands.add_parser("models", help="models for the built-in engine: list, add, use, set, remove")
    verbs = models.add_subparsers(dest="verb", metavar="VERB", required=True)
    verbs.add_parser("list", help="list the models on this computer and what each needs")
    add = verbs.add_parser("add", help="add a GGUF model file")
    add.add_argument("file", type=Path)
    add.add_argument(
        "--copy", action="store_true", help="copy it into Cairn's models folder (default: keep it where it is)"
    )
    verbs.add_parser("use", help="make a model the Built-in account's").add_argument("name")
    settings = verbs.add_parser("set", help="threads, context or batch size for one model (0: the machine's choice)")
    settings.add_argument("name")
    for option in ("threads", "context", "batch"):
        settings.add_argument(f"--{option}", type=int, metavar="N")
    settings.add_argument("--template", metavar="FILE", help="a Jinja chat template for it ('none': its own again)")
    verbs.add_parser("remove", help="remove a model (its file too, when Cairn copied it)").add_argument("name")
    verbs.add_parser("suggested", help="small chat models worth downloading")
    fetch = verbs.add_parser("download", help="download a GGUF (resumes what an earlier try saved)")
    fetch.add_argument(
        "source", nargs="?", help="a web address, a Hugging Face owner/name with --file, or a suggestion"
    )
    fetch.add_argument("--file", help="the file in the Hugging Face repository")
    fetch.add_argument("--sha256", help="the file's SHA-256, when you know it")
    fetch.add_argument(
        "--set-token", action="store_true", help="ask for a Hugging Face token and keep it in the keychain"
    )


def run_models(args: argparse.Namespace, app: CairnApp) -> int:
    try:
        if args.verb == "list":
            return _list(app)
        if args.verb == "add":
            return _add(app, args.file, copy=args.copy)
        if args.verb == "suggested":
            return _suggested(app)
        if args.verb == "download":
            return run_download(args, app)
        entry = _named(app, args.name)
        if args.verb == "use":
            app.local.choose_model(entry.sha256)
            print(f"The Built-in account now runs {entry.title}. Chats on it start the engine's cache again.")
            return 0
        if args.verb == "set":
            return _set(app, entry, args)
        freed = app.local.remove(entry.sha256)
        kept = f"; {freed / MIB:,.0f} MiB freed" if freed else f"; the file stays at {entry.file}"
        print(printable(f"Removed {entry.title}{kept}."))
        return 0
    except (LibraryError, DownloadError) as exc:
        raise CommandError(str(exc)) from exc


def _named(app: CairnApp, name: str) -> ModelEntry:
    entry = app.local.find(name)
    if entry is None:
        raise CommandError(f"There is no model {name!r}; `cairn models list` shows them (a title or a hash prefix).")
    return entry


def _list(app: CairnApp) -> int:
    if not app.local.built:
        print("The built-in engine is not built on this computer: run `make engine` in Cairn's folder.")
    account = app.local.builtin_account()
    models = app.local.listing()
    if not models:
        print("No models yet. `cairn chat --account built-in` sets up the default one; `cairn models add FILE`")
        print("adds one of yours.")
    for entry in models:
        plan = entry.plan()
        chosen = "*" if account is not None and account.default_model == entry.sha256 else " "
        where = "in Cairn's folder" if entry.owned else "kept where it is"
        tools = "tools" if entry.takes_tools else "no tools"
        print(printable(f"{chosen} {entry.sha256[:12]}  {entry.describe()}"))
        print(printable(f"    {entry.file} ({where}); {tools}; licence {entry.license or 'not stated'}"))
        fits = "" if plan.fits else "  (does not fit in the memory free now)"
        print(f"    {plan.describe()}; needs about {plan.needed / MIB:,.0f} MiB{fits}")
    print(app.local.status().words())
    return 0


def _add(app: CairnApp, file: Path, *, copy: bool) -> int:
    entry = app.local.add(file, copy=copy)
    print(printable(f"Added {entry.describe()} ({entry.sha256[:12]}). `cairn models use {entry.sha256[:12]}` runs it."))
    if not entry.takes_tools:
        print("Its chat template does not render tool calls, so chats on it offer no tools.")
    return 0


def _set(app: CairnApp, entry: ModelEntry, args: argparse.Namespace) -> int:
    given = {name: getattr(args, name) for name in ("threads", "context", "batch") if getattr(args, name) is not None}
    if args.template is not None:
        template = None if args.template.lower() == "none" else Path(args.template)
        entry = app.local.set_template(entry.sha256, template)
        tools = "renders tools" if entry.takes_tools else "renders no tools"
        print(printable(f"{entry.title}: chat template {entry.template_file or 'of its own'} ({tools})."))
    if not given:
        if args.template is not None:
            return 0
        raise CommandError(
            "Say what to set: --threads N, --context N, --batch N (0: the machine's choice) or --template FILE."
        )
    if any(value < 0 for value in given.values()):
        raise CommandError("Threads, context and batch are whole numbers of 1 or more (0: the machine's choice).")
    changed = app.local.set_options(entry.sha256, **{k: v or None for k, v in given.items()})
    plan = changed.plan()
    print(f"{changed.title}: {plan.describe()}.")
    print("It takes effect the next time the engine loads the model (Unload, or another model, first).")
    return 0


def _suggested(app: CairnApp) -> int:
    for model in app.downloads.curated():
        tools = "tools" if model.tools_in_template else "no tools"
        print(
            printable(
                f"{model.title}: about {model.approx_size_bytes / 1e9:,.1f} GB to download, "
                f"{model.approx_memory_bytes / 1e9:,.1f} GB to run; {model.good_at} ({tools}; {model.license})"
            )
        )
        print(printable(f"    cairn models download {model.repo} --file {model.file}"))
    return 0

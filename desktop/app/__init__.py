"""The front door: what the window and the command line call to use Cairn.

``open_cairn`` assembles Cairn (``desktop.root``) and returns the ``CairnApp``, whose use cases
(``chats``, ``options``, ``turns``, ``attachments``, ``accounts``, ``models``, ``preferences``,
``mcp``, ``secrets``) run on the core's loop and publish immutable snapshots and typed events. ``ui/`` and
``desktop/cli/`` import this package only, plus the event types (``desktop.turn.events``) and
the content types (``host.content``); an import-linter contract in ``pyproject.toml`` keeps it
so. Everything they need to name is here, so nothing else reaches into the runtime, the
journal or the settings. ``docs/architecture.md`` draws the rooms behind it.
"""

from desktop.app.accounts import Accounts
from desktop.app.attachments import LIMITS, Attachment, AttachmentRefused, shown_size, too_many
from desktop.app.cairn import CairnApp, open_cairn
from desktop.app.chats import PAGE, ChatPage, OpenedChat
from desktop.app.local_models import BUILTIN_ACCOUNT, BUILTIN_PROVIDER, LocalModels, ModelsOverview
from desktop.app.mcp_servers import ImportResult
from desktop.app.message_checks import MAX_MESSAGE_CHARS, InputRefused, decode_input, message_problem
from desktop.app.model_downloads import DownloadPaused, ModelDownloads
from desktop.app.models import LOCAL_PORTS, LocalServer
from desktop.app.secrets import LaunchNotice, LeavingFile
from desktop.app.shared import NoRoute, NoSuchChat, TurnInProgress
from desktop.app.snapshot import AccountView, AppSnapshot
from desktop.app.turns import STOPPED, SessionEvent, TurnBusy, TurnRoute
from desktop.app.usage_words import cost_text, request_text, totals_text, turn_usage_text
from desktop.catalog.modelsdev import MODELS_DEV_URL
from desktop.catalog.transport import CatalogError, ProviderPreset
from desktop.compaction.compactor import CompactionFailed
from desktop.compaction.policy import ContextFill, NothingToCompact, focus_problem
from desktop.context.budgets import source_words
from desktop.engine.curated import CuratedModel
from desktop.engine.downloads import Download, DownloadError, Progress
from desktop.engine.engine import EngineStatus
from desktop.engine.library import LibraryError, ModelEntry
from desktop.provider.errors import ProviderError
from desktop.provider.local_probe import ServerReport
from desktop.root import WorkspaceError
from desktop.session.chat_route import ChatRouteView
from desktop.session.chat_settings import EFFORTS, ChatSettingsError, ChatSettingsView, inherited_words
from desktop.session.parked import ParkedCall
from desktop.settings.mcp_import import ConfigImportError, ImportPlan, NotImported, claude_config_path
from desktop.settings.mcp_roots import RootsChange
from desktop.settings.mcp_servers import McpServerSetting, McpSettingsError, SecretsNotKept, looks_secret
from desktop.settings.problems import problem_text
from desktop.settings.routes import ResolvedRoute, RouteError, resolve_route
from desktop.settings.secret_file import SECRETS_FILE, SecretFile, SecretFileError
from desktop.settings.secrets import KEY_ENV, KeychainUnavailable, SecretPlace, SecretStore, SecretsView
from desktop.settings.store import (
    SKILLS_LISTED_MAX,
    TEXT_SIZE_MAX,
    TEXT_SIZE_MIN,
    Account,
    Assistant,
    Settings,
    SettingsError,
)
from desktop.tools.mcp_prompts import FilledPrompt, PromptChoices, PromptImage, PromptUnavailable
from desktop.tools.server_views import ServerView
from desktop.turn.approvals import Approval, Approver, Choice
from desktop.turn.continuation import CONTINUE
from desktop.turn.elicitations import AnswerInvalid, Elicitor
from desktop.turn.outcome import NothingToRetry, TurnOutcome
from desktop.version import cairn_version
from host.errors import CairnError, JournalError
from host.journal import SearchResults, SessionRecord
from host.mcp import PromptArgument, ServerPrompt, ServerState, ServerStatus
from host.mcp.offers import ListedResource, ListedTemplate, ResourceListing
from host.paths import CairnPaths
from host.permissions import ToolRequest
from host.rows import TranscriptRow
from host.search_text import NO_SNIPPET, Snippet
from host.skills import SKILL_FILE, SkillCatalog, SkillStore
from host.text import printable
from host.tools import Tool
from host.tools.builtin import NO_WORKSPACE
from host.tools.forms import FieldValue, Form, FormField
from host.tools.questions import Action, Answer, Question
from host.usage import RequestUsage, UsageTotals
from host.versions import NotAVersion

__all__ = [
    "BUILTIN_ACCOUNT",
    "BUILTIN_PROVIDER",
    "CONTINUE",
    "EFFORTS",
    "KEY_ENV",
    "LIMITS",
    "LOCAL_PORTS",
    "MAX_MESSAGE_CHARS",
    "MODELS_DEV_URL",
    "NO_SNIPPET",
    "NO_WORKSPACE",
    "PAGE",
    "SECRETS_FILE",
    "SKILLS_LISTED_MAX",
    "SKILL_FILE",
    "STOPPED",
    "TEXT_SIZE_MAX",
    "TEXT_SIZE_MIN",
    "Account",
    "AccountView",
    "Accounts",
    "Action",
    "Answer",
    "AnswerInvalid",
    "AppSnapshot",
    "Approval",
    "Approver",
    "Assistant",
    "Attachment",
    "AttachmentRefused",
    "CairnApp",
    "CairnError",
    "CairnPaths",
    "CatalogError",
    "ChatPage",
    "ChatRouteView",
    "ChatSettingsError",
    "ChatSettingsView",
    "Choice",
    "CompactionFailed",
    "ConfigImportError",
    "ContextFill",
    "CuratedModel",
    "Download",
    "DownloadError",
    "DownloadPaused",
    "Elicitor",
    "EngineStatus",
    "FieldValue",
    "FilledPrompt",
    "Form",
    "FormField",
    "ImportPlan",
    "ImportResult",
    "InputRefused",
    "JournalError",
    "KeychainUnavailable",
    "LaunchNotice",
    "LeavingFile",
    "LibraryError",
    "ListedResource",
    "ListedTemplate",
    "LocalModels",
    "LocalServer",
    "McpServerSetting",
    "McpSettingsError",
    "ModelDownloads",
    "ModelEntry",
    "ModelsOverview",
    "NoRoute",
    "NoSuchChat",
    "NotAVersion",
    "NotImported",
    "NothingToCompact",
    "NothingToRetry",
    "OpenedChat",
    "ParkedCall",
    "Progress",
    "PromptArgument",
    "PromptChoices",
    "PromptImage",
    "PromptUnavailable",
    "ProviderError",
    "ProviderPreset",
    "Question",
    "RequestUsage",
    "ResolvedRoute",
    "ResourceListing",
    "RootsChange",
    "RouteError",
    "SearchResults",
    "SecretFile",
    "SecretFileError",
    "SecretPlace",
    "SecretStore",
    "SecretsNotKept",
    "SecretsView",
    "ServerPrompt",
    "ServerReport",
    "ServerState",
    "ServerStatus",
    "ServerView",
    "SessionEvent",
    "SessionRecord",
    "Settings",
    "SettingsError",
    "SkillCatalog",
    "SkillStore",
    "Snippet",
    "Tool",
    "ToolRequest",
    "TranscriptRow",
    "TurnBusy",
    "TurnInProgress",
    "TurnOutcome",
    "TurnRoute",
    "UsageTotals",
    "WorkspaceError",
    "cairn_version",
    "claude_config_path",
    "cost_text",
    "decode_input",
    "focus_problem",
    "inherited_words",
    "looks_secret",
    "message_problem",
    "open_cairn",
    "printable",
    "problem_text",
    "request_text",
    "resolve_route",
    "shown_size",
    "source_words",
    "too_many",
    "totals_text",
    "turn_usage_text",
]

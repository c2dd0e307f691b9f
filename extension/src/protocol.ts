/**
 * The language server's contract (issue 3 + the shell's additions) as TypeScript types.
 * The server owns every rule; these types only name what crosses the wire.
 */

export type MemoryFileName = 'MEMORY.md' | 'USER.md';
export const MEMORY_FILES: readonly MemoryFileName[] = ['MEMORY.md', 'USER.md'];

export function isMemoryFileName(value: unknown): value is MemoryFileName {
  return value === 'MEMORY.md' || value === 'USER.md';
}

/** `file` of a command about the user memory (one USER.md read in every workspace). */
export const USER_MEMORY = 'user-memory';
/** What a command about one memory file takes: a workspace's file, or the user memory. */
export type MemoryTarget = MemoryFileName | typeof USER_MEMORY;

export function isMemoryTarget(value: unknown): value is MemoryTarget {
  return isMemoryFileName(value) || value === USER_MEMORY;
}

/** How a size stands against its caps, as the server judges it. */
export type UsageLevel = 'ok' | 'warning' | 'error';

/** One file's size against its caps, in UTF-8 bytes. */
export interface FileUsage {
  size_bytes: number;
  soft_cap: number;
  hard_cap: number;
  over_soft_cap: boolean;
  over_hard_cap: boolean;
  /** 'error' over the hard cap or unreadable, 'warning' over the soft cap. */
  level: UsageLevel;
  /** What that means, for people: "within budget", "over the soft cap: consolidate before adding more"… */
  state: string;
  /** "buffer" when the size follows an open editor's unsaved text, "disk" otherwise. */
  source?: 'buffer' | 'disk';
  /** Set when the file cannot be read (a directory, a FIFO, a symlink out, permissions): the size is unknown. */
  error?: string;
}

/** The user memory's usage: a file's, with its real path (and `file:` URI), and whether it is
 * there yet (nothing makes it but a write: until then 0 B, `exists` false). */
export interface UserMemoryUsage extends FileUsage {
  path: string;
  uri: string;
  exists: boolean;
}

/** A workspace's two files, and the user memory every workspace's prompt holds (`userMemory`,
 * sent once the server has read it). */
export type Usage = Record<MemoryFileName, FileUsage> & { userMemory?: UserMemoryUsage };

/** What a successful memoryAdd/Replace/Consolidate returns. */
export interface WriteResult {
  file: MemoryFileName;
  operation: 'add' | 'replace' | 'consolidate';
  before_hash: string;
  after_hash: string;
  before_size_bytes: number;
  after_size_bytes: number;
  over_soft_cap: boolean;
  over_hard_cap: boolean;
  /** The spec's tool-result line (its soft-cap hint names memory_consolidate). */
  message: string;
  /** `message`, then the whole file as it now is: what a model gets back from a write. */
  agent_text: string;
  /** The result line for a person: the soft-cap hint names "Metis: Consolidate …". */
  person_text?: string;
}

/** `metis/memoryUpdated`: the spec's memory.updated payload plus the workspace folder URI. */
export interface MemoryUpdatedParams {
  file: MemoryFileName;
  /** "user" for a write of the user memory (`workspace` is then its folder's URI). */
  scope?: 'user';
  operation: 'add' | 'replace' | 'consolidate';
  before_hash: string;
  after_hash: string;
  before_size_bytes: number;
  after_size_bytes: number;
  workspace: string;
}

/** `metis/memoryEviction`: the spec's memory.eviction payload plus the workspace folder URI. */
export interface MemoryEvictionParams {
  file: MemoryFileName;
  /** "user" for the user memory (`workspace` is then its folder's URI). */
  scope?: 'user';
  trigger: 'size_cap_exceeded' | 'manual';
  entries_evicted: number;
  size_before_bytes: number;
  size_after_bytes: number;
  workspace: string;
}

/** `metis/usageChanged`: pushed whenever either file's usage changes (typing or disk). */
export interface UsageChangedParams {
  workspace: string;
  usage: Usage;
}

/** `metis/proposalUsage`: a consolidation proposal (`metis-proposal:` document) was opened or
 * changed; its size against the caps of the file it is for. */
export interface ProposalUsageParams {
  uri: string;
  file: MemoryFileName;
  /** "user": a proposal for the user memory. */
  scope?: 'user';
  size_bytes: number;
  soft_cap: number;
  hard_cap: number;
  level: UsageLevel;
  state: string;
}

export interface TidyResult {
  file: MemoryTarget;
  content: string;
  changed: boolean;
}

/** `data` of a JSON-RPC error from a write command. */
export interface ToolErrorData {
  code: string;
  is_user_visible: boolean;
  /** The failure in a person's words, when they differ from `message` (the agent's). */
  person_text?: string;
}

/** Commands the server implements (vscode-languageclient registers these ids itself). */
export const ServerCommand = {
  memoryAdd: 'metis.memoryAdd',
  memoryReplace: 'metis.memoryReplace',
  memoryConsolidate: 'metis.memoryConsolidate',
  assemblePrompt: 'metis.assemblePrompt',
  usage: 'metis.usage',
  tidy: 'metis.tidy',
  read: 'metis.read',
  agentHosts: 'metis.agentHosts',
  connectAgents: 'metis.connectAgents',
  applyEdit: 'metis.applyEdit',
  showConsolidationProposal: 'metis.showConsolidationProposal',
  agentContext: 'metis.agentContext',
  consolidationPrompt: 'metis.consolidationPrompt',
  createMemory: 'metis.createMemory',
  installLauncher: 'metis.installLauncher',
  hostPrompts: 'metis.hostPrompts',
  history: 'metis.history',
  historyDiff: 'metis.historyDiff',
  blame: 'metis.blame',
  undo: 'metis.undo',
  restore: 'metis.restore',
  unarchive: 'metis.unarchive',
  review: 'metis.review',
  setReview: 'metis.setReview',
  reviewAccept: 'metis.reviewAccept',
  reviewReject: 'metis.reviewReject',
  openUserMemory: 'metis.openUserMemory',
  moveToWorkspace: 'metis.moveToWorkspace',
  hostMemoryFound: 'metis.hostMemoryFound',
  importHostMemory: 'metis.importHostMemory',
} as const;

export type ServerCommandName = (typeof ServerCommand)[keyof typeof ServerCommand];

/**
 * Each server command's one argument object. The server's pydantic models
 * (`argument_models()` in server/metis_memory/lsp/protocol.py) are the rule and validate every call;
 * tests/lsp/test_protocol_contract.py fails when these fields disagree with them.
 */
export interface ServerCommandArgs {
  // via: the editor's language-model tools say so: the write is then an agent's (door
  // `language-model-tool`), staged for review when review is on (the answer is a StagedAnswer).
  // file: a workspace's MEMORY.md or USER.md, or the user memory ('user-memory': `workspace`
  // is then not needed). (Spelt out: the contract test reads each field's type here.)
  [ServerCommand.memoryAdd]: {
    file: 'MEMORY.md' | 'USER.md' | 'user-memory';
    entry: string;
    workspace?: string;
    via?: 'languageModelTool';
  };
  [ServerCommand.memoryReplace]: {
    file: 'MEMORY.md' | 'USER.md' | 'user-memory';
    old: string;
    new: string;
    workspace?: string;
    via?: 'languageModelTool';
  };
  // expectedHash: sha256 of the file's bytes as last read; refused (`conflict`) if they changed.
  [ServerCommand.memoryConsolidate]: {
    file: 'MEMORY.md' | 'USER.md' | 'user-memory';
    content: string;
    workspace?: string;
    expectedHash?: string;
    via?: 'languageModelTool';
  };
  [ServerCommand.assemblePrompt]: { base: string; workspace?: string };
  [ServerCommand.usage]: { workspace?: string };
  [ServerCommand.tidy]: { file: 'MEMORY.md' | 'USER.md' | 'user-memory'; workspace?: string };
  [ServerCommand.read]: { workspace?: string };
  // editorProvidesMcp: as connectAgents will be sent, so that `files` lists what it writes.
  [ServerCommand.agentHosts]: { workspace?: string; editorProvidesMcp?: boolean };
  // expectedPlan: `plan` of the dry run shown; refused (`conflict`) unless the plan made now is it.
  [ServerCommand.connectAgents]: {
    hosts: string[];
    dryRun?: boolean;
    editorProvidesMcp?: boolean;
    workspace?: string;
    expectedPlan?: string;
  };
  [ServerCommand.applyEdit]: { label: string; edit: Record<string, unknown> };
  [ServerCommand.showConsolidationProposal]: { file: 'MEMORY.md' | 'USER.md' | 'user-memory'; workspace?: string };
  [ServerCommand.agentContext]: { workspace?: string };
  [ServerCommand.consolidationPrompt]: { file: 'MEMORY.md' | 'USER.md' | 'user-memory'; text: string };
  // Both files when `files` is left out.
  [ServerCommand.createMemory]: { files?: MemoryFileName[]; workspace?: string };
  // refresh: only rewrite a launcher of ours that runs something else; never create one.
  [ServerCommand.installLauncher]: { refresh?: boolean };
  [ServerCommand.hostPrompts]: { workspace?: string };
  // Newest first; both files when `file` is left out. file 'user-memory' (here and below):
  // the user memory's own log and review inbox, whose ids are its own (`workspace` not needed).
  [ServerCommand.history]: { workspace?: string; file?: 'MEMORY.md' | 'USER.md' | 'user-memory'; limit?: number };
  [ServerCommand.historyDiff]: { workspace?: string; file?: 'user-memory'; id: number };
  [ServerCommand.blame]: { workspace?: string; file: 'MEMORY.md' | 'USER.md' | 'user-memory' };
  [ServerCommand.undo]: { workspace?: string; file?: 'user-memory'; id: number };
  // The file as it was after record `id`.
  [ServerCommand.restore]: { workspace?: string; file?: 'user-memory'; id: number };
  // An archived entry's id, "<record id>:<n>".
  [ServerCommand.unarchive]: { workspace?: string; file?: 'user-memory'; id: string };
  [ServerCommand.review]: { workspace?: string; file?: 'user-memory' };
  [ServerCommand.setReview]: { workspace?: string; file?: 'user-memory'; on: boolean };
  [ServerCommand.reviewAccept]: { workspace?: string; file?: 'user-memory'; id: number };
  [ServerCommand.reviewReject]: { workspace?: string; file?: 'user-memory'; id: number };
  // Where the user memory is; nothing is created. (It takes an empty object.)
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  [ServerCommand.openUserMemory]: {};
  // An entry of the user memory moved into a workspace's MEMORY.md (add there, then remove).
  [ServerCommand.moveToWorkspace]: { entry: string; workspace: string; expectedHash?: string };
  // A workspace folder's URI; every host whose memory is found when `hosts` is left out.
  [ServerCommand.hostMemoryFound]: { folder: string };
  [ServerCommand.importHostMemory]: { folder: string; hosts?: string[] };
}

/** What each server command answers. */
export interface ServerCommandResults {
  [ServerCommand.memoryAdd]: WriteResult;
  [ServerCommand.memoryReplace]: WriteResult;
  [ServerCommand.memoryConsolidate]: WriteResult;
  [ServerCommand.assemblePrompt]: string;
  [ServerCommand.usage]: Usage;
  [ServerCommand.tidy]: TidyResult;
  [ServerCommand.read]: unknown;
  [ServerCommand.agentHosts]: AgentHost[];
  [ServerCommand.connectAgents]: ConnectResult;
  [ServerCommand.applyEdit]: { applied: boolean; failureReason?: string | null };
  [ServerCommand.showConsolidationProposal]: { file: MemoryFileName; uri: string; shown: boolean };
  [ServerCommand.agentContext]: AgentContext[];
  [ServerCommand.consolidationPrompt]: string;
  [ServerCommand.createMemory]: CreateMemoryResult;
  [ServerCommand.installLauncher]: InstallLauncherResult;
  [ServerCommand.hostPrompts]: HostPrompt[];
  [ServerCommand.history]: HistoryResult;
  [ServerCommand.historyDiff]: HistoryDiff;
  [ServerCommand.blame]: { entries: BlameEntry[] };
  [ServerCommand.undo]: WriteResult;
  [ServerCommand.restore]: WriteResult;
  [ServerCommand.unarchive]: WriteResult;
  [ServerCommand.review]: ReviewState;
  [ServerCommand.setReview]: { on: boolean };
  [ServerCommand.reviewAccept]: WriteResult;
  [ServerCommand.reviewReject]: { rejected: number };
  [ServerCommand.openUserMemory]: UserMemoryLocation;
  [ServerCommand.moveToWorkspace]: unknown;
  [ServerCommand.hostMemoryFound]: HostMemoryFound;
  [ServerCommand.importHostMemory]: ImportProposal;
}

/** `metis.hostMemoryFound`: which agent hosts keep memory for a folder or for the user (names
 * as `metis-memory import --from` takes them), where, and whether the folder has memory of
 * ours. */
export interface HostMemoryFound {
  folder: string;
  hosts: string[];
  ours: boolean;
  locations: { host: string; path: string; scope: 'user' | 'workspace' }[];
}

/** An entry an import brings in, or leaves out as already there (`of`: where it is). */
export interface ImportedEntry {
  text: string;
  host: string;
  /** The host's file it was read from. */
  source: string;
  line: number;
  of?: string;
}

/** One file's part of an import: the file as it is and as it would be, and the hash of its
 * bytes to apply it against (of no bytes for a file not there yet). */
export interface ImportTarget {
  target: MemoryTarget;
  path: string;
  exists: boolean;
  current: string;
  proposed: string;
  expected_hash: string;
  size_bytes: number;
  soft_cap_bytes: number;
  hard_cap_bytes: number;
  /** Bytes the proposed text is over the hard cap (0 within it). */
  over_by: number;
  applicable: boolean;
  /** "USER.md would be 3,500 bytes, 428 over its hard cap of 3,072: …" */
  over_cap_statement: string | null;
  /** Why nothing can be proposed for this file (it cannot be read as it is). */
  problem: string | null;
  added: ImportedEntry[];
  duplicates: ImportedEntry[];
  /** Entries refused as secrets: the rule, never the value. */
  refused: { rule: string; host: string; source: string; line: number }[];
}

/** `metis.importHostMemory`: a proposal per file (MEMORY.md, USER.md, the user memory). */
export interface ImportProposal {
  workspace: string;
  hosts: string[];
  found_nothing: boolean;
  targets: ImportTarget[];
  looked_in: string[];
  read: string[];
  skipped: { path: string; reason: string }[];
}

/** `metis.openUserMemory`: where the user memory is. `error`: it is there but not to be used
 * (another user's folder, not a regular file), for people. */
export interface UserMemoryLocation {
  path: string;
  uri: string;
  exists: boolean;
  error?: string;
}

/**
 * What a write command with `via` answers instead of a WriteResult when review is on: the
 * change is staged, the file untouched. `agent_text` says so to the model, with the id.
 * (ServerCommandResults names WriteResult: only a call with `via` gets this.)
 */
export interface StagedAnswer {
  staged: StagedChange;
  agent_text: string;
  person_text: string;
}

/** One recorded write (`metis.history`), its texts redacted. Newest first in a list. */
export interface HistoryRecord {
  id: number;
  /** UTC, ISO 8601 with Z. */
  time: string;
  file: MemoryFileName;
  /** add, replace, consolidate, undo, restore, unarchive, outside, … */
  operation: string;
  /** cli, mcp, editor, language-model-tool, anthropic-memory-tool, python, outside. */
  door: string;
  actor: string;
  session: string | null;
  before_hash: string;
  after_hash: string;
  before_size_bytes: number;
  after_size_bytes: number;
  added: string[];
  removed: string[];
  /** One line: `added 1 entry: "Use pnpm…"`. */
  summary: string;
  /** Who, for people: "Claude Code 2.1.4 through memory_add over MCP"; "an outside edit". */
  person: string;
  /** What an undo, restore or put-back was of ("puts back an entry archived by #12"), else null. */
  detail: string | null;
}

/** An entry a consolidation, undo or restore removed, kept so it can be put back. */
export interface ArchivedEntry {
  /** "<record id>:<n>": what `metis.unarchive` takes. */
  id: string;
  file: MemoryFileName;
  text: string;
  time: string;
  operation: string;
  actor: string;
  /** Who removed it, for people. */
  person: string;
  /** The record that removed it. */
  record: number;
}

export interface HistoryResult {
  records: HistoryRecord[];
  archived: ArchivedEntry[];
}

/** `metis.historyDiff`: a record's file before and after it (redacted), and the diff's title. */
export interface HistoryDiff {
  id: number;
  file: MemoryFileName;
  before: string;
  after: string;
  title: string;
}

/** `metis.blame`: who added one entry of a file. */
export interface BlameEntry {
  line: number;
  end_line: number;
  text: string;
  id: number | null;
  actor: string | null;
  door: string | null;
  operation: string | null;
  time: string | null;
  origin: 'log' | 'before-log' | 'outside';
  hover: string;
}

/** An agent's write waiting for the user's review (`metis.review`). */
export interface StagedChange {
  id: number;
  time: string;
  file: MemoryFileName;
  operation: string;
  door: string;
  actor: string;
  session: string | null;
  /** Who, for people: "Claude Code 2.1.4 through memory_add over MCP". */
  person: string;
  added: string[];
  removed: string[];
  /** The file when it was staged, and as the change would leave it. */
  before: string;
  after: string;
  summary: string;
}

export interface ReviewState {
  on: boolean;
  staged: StagedChange[];
}

/** `metis/historyChanged`: a write (by any door, or outside every door) was recorded. */
export interface HistoryChangedParams {
  workspace: string;
  file: MemoryFileName;
  /** "user": in the user memory's log (`workspace` is then its folder's URI). */
  scope?: 'user';
}

/** `metis/reviewChanged`: how many changes wait for review; `arrived` is the one just staged. */
export interface ReviewChangedParams {
  workspace: string;
  count: number;
  arrived: StagedChange | null;
  /** "user": the user memory's inbox (`workspace` is then its folder's URI). */
  scope?: 'user';
}

/** `metis.createMemory`: the files written from the template, and those left as they were. */
export interface CreateMemoryResult {
  created: MemoryFileName[];
  existing: MemoryFileName[];
  /** What happened, for people. */
  message: string;
}

/** `metis.hostPrompts`: what one agent host's model receives of the memory through its hook. */
export interface HostPrompt {
  /** The hook's `--host` name ("claude"). */
  host: string;
  title: string;
  /** Exactly what the host's model receives; "" when the hook sends nothing (an empty memory). */
  text: string;
  bytes: number;
  characters: number;
  /** When the hook sends it, in words. */
  when: string;
  /** The host's limit on a hook's context, where it documents one. */
  limit: { characters: number; what: string; source: string } | null;
  /** "4,211 B, 42% of its 10,000-character limit", for a picker. */
  size: string;
  /** "Claude Code receives 4,211 B (4,180 characters), 42% of its 10,000-character limit": one line. */
  headline: string;
  /** The sentence shown over the text: how much, when, against which limit. */
  summary: string;
}

/** One agent's files in `metis.agentContext`, with the worst level among them. */
export interface AgentContext {
  consumer: string;
  worst: BudgetLevel;
  files: AgentFile[];
}

export type BudgetLevel = 'green' | 'yellow' | 'red' | 'grey';

export interface AgentFile {
  path: string;
  uri: string;
  /** Relative to the workspace, or `~/...`. */
  shown: string;
  budget?: string;
  name?: string;
  /** The unit of the budget's (first) limit. */
  unit?: 'bytes' | 'chars' | 'lines';
  /** "5,000 B after 30,000 B above of 32,768 B (107%)". */
  used: string | null;
  state?: string;
  level: BudgetLevel;
  percent?: number;
  /** Where the agent stops reading, or null when it reads all of it. */
  cut?: { line: number; character: number } | null;
  /** The agent's other budgets on this file, far from mattering (no rows of their own): "name: used". */
  also?: string[];
}

/**
 * Commands the server's code actions invoke and this extension implements. They are sent as
 * `initializationOptions.clientCommands`: the server offers their actions only to clients
 * that declare them.
 */
export const ClientCommand = {
  openConsolidation: 'metis.openConsolidation',
  replaceEntryPrompt: 'metis.replaceEntryPrompt',
} as const;

/** `initializationOptions` the server reads. */
export interface InitializationOptions {
  clientCommands: string[];
}

/** One entry of `metis.agentHosts`: a host `metis-memory init` can set up. */
export interface AgentHost {
  name: string;
  title: string;
  /** Workspace-relative files it writes. */
  files: string[];
  /** Why it seems in use here ("CLAUDE.md in this folder", "claude on PATH"); empty if not. */
  detected: string[];
}

/** `metis.connectAgents`: what was (or, with dryRun, would be) written. */
export interface ConnectResult {
  /** What every file runs: always the plain `metis-memory`, never a path. */
  command: string;
  files: ConnectFile[];
  /** The plan's digest: send it back as `expectedPlan` to write exactly what was shown. */
  plan: string;
  todo: { host: string; text: string }[];
  /** The same report `metis-memory init` prints. */
  report: string;
  /** Whether `metis-memory` is on the PATH the server sees (else agents cannot run it). */
  onPath: boolean;
  launcher: LauncherStatus;
}

export interface ConnectFile {
  path: string;
  change: 'created' | 'updated' | 'unchanged';
  hosts: string[];
  what: string[];
  /** With dryRun: the text now (null: no such file) and the text it would get. */
  before?: string | null;
  after?: string;
}

/** The `metis-memory` launcher in the user's bin folder (server/metis_memory/hosts/launcher.py). */
export interface LauncherStatus {
  /** Where it goes, `~/` for the home folder. */
  path: string;
  /** `stale`: ours, running another copy; `edited`: ours, changed by the user; `foreign`/`symlink`/`other`: not ours. The last four are never touched. */
  state: 'absent' | 'current' | 'stale' | 'edited' | 'foreign' | 'symlink' | 'other' | 'unsupported';
  /** What `metis-memory` is on PATH, if anything. */
  found: string | null;
  binOnPath: boolean;
  /** The shell line that puts its folder on PATH, when it is not. */
  pathHint: string | null;
}

/** `metis.installLauncher`. */
export interface InstallLauncherResult {
  written: boolean;
  /** For people: what was done, and what is left (the PATH line). */
  message: string;
  onPath: boolean;
  launcher: LauncherStatus;
}

export const ServerNotification = {
  memoryUpdated: 'metis/memoryUpdated',
  memoryEviction: 'metis/memoryEviction',
  usageChanged: 'metis/usageChanged',
  proposalUsage: 'metis/proposalUsage',
  historyChanged: 'metis/historyChanged',
  reviewChanged: 'metis/reviewChanged',
} as const;

/** Arguments of `ClientCommand.openConsolidation`. */
export interface OpenConsolidationArgs {
  file: MemoryTarget;
  workspace?: string;
  /** An entry's text, selected in the proposal (the entry a diagnostic is about). */
  select?: string;
}

export interface ReplaceEntryPromptArgs {
  file: MemoryTarget;
  old: string;
  workspace?: string;
}

export function isToolErrorData(value: unknown): value is ToolErrorData {
  return typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string';
}

/**
 * The server's wire contract as TypeScript types (see editors/PROTOCOL.md), plus the names of
 * the server commands and notifications. Pure: shared by the extension and the unit tests.
 */

export interface LspPosition {
  readonly line: number;
  readonly character: number;
}

export interface LspRange {
  readonly start: LspPosition;
  readonly end: LspPosition;
}

export interface Citation {
  readonly number: number;
  readonly uri: string;
  readonly range: LspRange;
  readonly symbol?: string | null;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly stale?: boolean;
}

export interface AnswerResult {
  readonly requestId: string;
  readonly answer: string;
  readonly citations: readonly Citation[];
  readonly confident: boolean;
  readonly provider: string;
  readonly model?: string | null;
  readonly error?: string | null;
}

export interface SearchHit {
  readonly uri: string;
  readonly range: LspRange;
  readonly path: string;
  readonly symbol?: string | null;
  readonly kind?: string | null;
  readonly score: number;
  readonly startLine: number;
  readonly endLine: number;
  readonly preview?: string | null;
  /** "who calls f?": the lines where this hit calls `f` (the preview is the first). */
  readonly useLines?: readonly number[] | null;
}

export interface IndexStatus {
  readonly folders: readonly string[];
  readonly files: number;
  readonly chunks: number;
  readonly embedded: number;
  readonly coverage: number;
  readonly embedder: string;
  readonly provider: string;
  readonly model?: string | null;
  readonly indexing: boolean;
  readonly lastIndexed?: number | null;
  readonly skipped?: Readonly<Record<string, number>>;
  /** The running index's phase while `indexing` (null otherwise). */
  readonly progress?: IndexProgress | null;
}

export interface IndexProgress {
  readonly phase: "scan" | "chunk" | "embed" | "windows" | "save";
  readonly done: number;
  readonly total: number;
  readonly percentage: number;
  readonly etaSeconds: number | null;
  readonly message: string;
}

export interface AnswerDelta {
  readonly requestId: string;
  readonly text: string;
}

export const ServerCommands = {
  ask: "codeqa.ask",
  explain: "codeqa.explain",
  search: "codeqa.search",
  status: "codeqa.status",
  reindex: "codeqa.reindex",
  showAnswer: "codeqa.showAnswer",
} as const;

export const Notifications = {
  answerDelta: "codeqa/answerDelta",
  answer: "codeqa/answer",
} as const;

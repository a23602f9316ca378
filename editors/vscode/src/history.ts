/** Question history for the ask box: most recent first, no duplicates, bounded. Pure. */

export const HISTORY_LIMIT = 30;

export function pushHistory(history: readonly string[], question: string, limit: number = HISTORY_LIMIT): string[] {
  const trimmed = question.trim();
  if (!trimmed) return [...history];
  return [trimmed, ...history.filter((q) => q !== trimmed)].slice(0, limit);
}

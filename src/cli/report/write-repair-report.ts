import { Buffer } from 'node:buffer';
import { writeFileAtomic } from '../../session/atomic-write.js';
import type { HistoryDocument } from '../documents.js';
import { elementLabel } from '../documents.js';
import { agentLabel } from '../sessions/agent-readers.js';
import {
  type ReportChange,
  type ReportEntry,
  type ReportViolation,
  renderRepairReport,
} from './render-repair-report.js';

/** What fix and scan know of one repaired (or checked) history. */
export interface RepairOutcome {
  document: HistoryDocument;
  before: readonly ReportViolation[];
  changes: readonly ReportChange[];
  remaining: readonly (ReportViolation & { why: string })[];
  output: readonly unknown[];
}

export function reportEntryOf(outcome: RepairOutcome): ReportEntry {
  const { document } = outcome;
  const entry: ReportEntry = {
    file: document.file,
    wire: document.wire,
    label: elementLabel(document.wire),
    input: document.items,
    output: outcome.output,
    before: outcome.before,
    changes: outcome.changes,
    remaining: outcome.remaining,
    problems: document.problems,
  };
  if (document.agent !== undefined) {
    entry.agent = agentLabel(document.agent.agent);
    entry.sources = document.agent.sources;
    entry.sourceKind = document.agent.sourceKind;
  }
  return entry;
}

/** Writes the HTML report of these outcomes to FILE (atomically: a reader never sees half a page). */
export async function writeRepairReport(file: string, outcomes: readonly RepairOutcome[]): Promise<void> {
  const html = renderRepairReport(outcomes.map(reportEntryOf));
  await writeFileAtomic(file, Buffer.from(html, 'utf8'), { mode: 0o644 });
}

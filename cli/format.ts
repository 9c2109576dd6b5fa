// Pure text helpers shared by the commands: kubectl-style tables, byte sizes and ages, and the
// machine-readable forms (-o json|yaml).
import { stringify } from 'yaml';

/** The output formats every read command takes; text is the default. */
export const OUTPUT_FORMATS = ['text', 'json', 'yaml'] as const;

/** `value` as JSON or YAML when the user asked for one, else undefined (print the text form). */
export function structuredOutput(output: string | undefined, value: unknown): string | undefined {
  if (output === 'json') return JSON.stringify(value, null, 2);
  if (output === 'yaml') return stringify(value).trimEnd();
  return undefined;
}

/** Columns padded to their widest cell, separated by three spaces, like `kubectl get`. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map(r => (r[i] ?? '').length)));
  return all
    .map(r =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 2621472 → "2.5 MiB"; under 1 KiB in bytes. */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return '-';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${bytes} B`;
  return `${value >= 10 ? value.toFixed(0) : value.toFixed(1)} ${UNITS[unit]}`;
}

/** Time since an RFC 3339 instant, as kubectl prints ages: 45s, 12m, 3h, 5d. */
export function age(since: string | Date | undefined, now: Date): string {
  if (since === undefined) return '-';
  const t = new Date(since).getTime();
  if (Number.isNaN(t)) return '-';
  const s = Math.max(0, Math.floor((now.getTime() - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export const yesNo = (value: boolean | undefined): string =>
  value === undefined ? '-' : value ? 'yes' : 'no';

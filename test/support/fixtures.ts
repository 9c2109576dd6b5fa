// CloudEvent fixtures: raw HTTP messages (headers + body) under test/fixtures/events, each with
// what a function must answer. The same files drive `npm run invoke` and the HTTP-level tests.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const EVENT_FIXTURE_DIR = join(import.meta.dirname, '..', 'fixtures', 'events');

export interface EventFixture {
  file: string;
  description: string;
  expect: { status: number; kind?: 'object' | 'tick'; error?: string };
  headers: Record<string, string>;
  body: unknown;
}

export function loadEventFixture(file: string): EventFixture {
  const raw = JSON.parse(readFileSync(join(EVENT_FIXTURE_DIR, file), 'utf8')) as Omit<EventFixture, 'file'>;
  return { file, ...raw };
}

export function loadEventFixtures(): EventFixture[] {
  return readdirSync(EVENT_FIXTURE_DIR)
    .filter(f => f.endsWith('.json'))
    .sort()
    .map(loadEventFixture);
}

/** The body as it travels on the wire. */
export function wireBody(fixture: EventFixture): string {
  return typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body);
}

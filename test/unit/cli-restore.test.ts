// kubectl etcdfn restore, the parts that need no cluster: the request ID fits the CRD's pattern and
// is new on every call.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { newRequestID } from '../../cli/restore.ts';

const crd = parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'crds', 'etcdfn.io_etcdclusters.yaml'), 'utf8'),
) as {
  spec: {
    versions: {
      schema: {
        openAPIV3Schema: {
          properties: {
            spec: {
              properties: {
                inPlaceRestore: { properties: { requestID: { pattern: string; maxLength: number } } };
              };
            };
          };
        };
      };
    }[];
  };
};

describe('newRequestID', () => {
  const rule =
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.inPlaceRestore.properties
      .requestID;
  it("matches spec.inPlaceRestore.requestID's pattern and length", () => {
    const id = newRequestID(new Date('2026-11-25T06:15:12Z'));
    assert.match(id, /^r20261125061512-[0-9a-f]{6}$/);
    assert.match(id, new RegExp(rule.pattern));
    assert.ok(id.length <= rule.maxLength);
  });
  it('is new on every call, even within the same second', () => {
    const now = new Date();
    const ids = new Set(Array.from({ length: 50 }, () => newRequestID(now)));
    assert.equal(ids.size, 50);
  });
});

// Issue 29, security 3: what a dead letter may write. Anyone who can reach the dead-letter function
// can post it anything, so it names an object for an Event only when that object is one of etcdfn's
// own kinds with a well-formed name and namespace (the adapter then reads it and writes only when it
// exists; test/integration/dead-letter.test.ts), and every caller-chosen part of the text is cut.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeDeadLetter, MAX_LETTER } from '../../functions/dead-letter/letter.ts';

const base = {
  id: 'a1',
  type: 'dev.knative.apiserver.ref.update',
  source: 'https://kubernetes.default.svc',
  knativeerrordest: 'http://reconcile-member.etcdfn-system.svc.cluster.local',
  knativeerrorcode: '503',
};

describe('the object a dead letter may write an Event about', () => {
  const rows: [string, Record<string, string>, string | undefined][] = [
    [
      'an EtcdMember',
      { kind: 'EtcdMember', name: 'example-1', namespace: 'team-a', apiversion: 'etcdfn.io/v1alpha1' },
      'EtcdMember team-a/example-1',
    ],
    [
      'an EtcdSnapshotSchedule',
      {
        kind: 'EtcdSnapshotSchedule',
        name: 'nightly',
        namespace: 'team-a',
        apiversion: 'etcdfn.io/v1alpha1',
      },
      'EtcdSnapshotSchedule team-a/nightly',
    ],
    [
      'a Secret in kube-system',
      { kind: 'Secret', name: 'admin', namespace: 'kube-system', apiversion: 'v1' },
      undefined,
    ],
    ['a Pod', { kind: 'Pod', name: 'demo-0', namespace: 'team-a', apiversion: 'v1' }, undefined],
    [
      "etcdfn's kind under another group",
      { kind: 'EtcdCluster', name: 'x', namespace: 'team-a', apiversion: 'evil.io/v1' },
      undefined,
    ],
    [
      'a malformed name',
      { kind: 'EtcdCluster', name: 'X Y\n', namespace: 'team-a', apiversion: 'etcdfn.io/v1alpha1' },
      undefined,
    ],
    [
      'a name too long',
      { kind: 'EtcdCluster', name: 'a'.repeat(300), namespace: 'team-a', apiversion: 'etcdfn.io/v1alpha1' },
      undefined,
    ],
    [
      'a malformed namespace',
      { kind: 'EtcdCluster', name: 'x', namespace: 'team.a', apiversion: 'etcdfn.io/v1alpha1' },
      undefined,
    ],
    ['no namespace', { kind: 'EtcdCluster', name: 'x', apiversion: 'etcdfn.io/v1alpha1' }, undefined],
  ];
  for (const [name, attrs, want] of rows) {
    it(`${name} → ${want ?? 'no Event'}`, () => {
      const letter = describeDeadLetter({ ...base, ...attrs });
      const got =
        letter.involved && `${letter.involved.kind} ${letter.involved.namespace}/${letter.involved.name}`;
      assert.equal(got, want);
      if (letter.involved) assert.equal(letter.involved.apiVersion, 'etcdfn.io/v1alpha1');
    });
  }
});

describe('the text of a dead letter is bounded', () => {
  it('every caller-chosen attribute is cut, and the whole message stays under MAX_LETTER', () => {
    const long = 'x'.repeat(5000);
    const letter = describeDeadLetter({
      ...base,
      type: long,
      knativeerrordest: `http://${long}`,
      knativeerrordata: Buffer.from(long).toString('base64'),
      kind: 'EtcdCluster',
      name: 'demo',
      namespace: 'team-a',
      apiversion: 'etcdfn.io/v1alpha1',
    });
    assert.ok(letter.content.message.length <= MAX_LETTER, `${letter.content.message.length} characters`);
    for (const value of Object.values(letter.fields)) assert.ok(value.length <= 300, value.slice(0, 40));
  });

  it('a status that is not three digits is not repeated; control characters become spaces', () => {
    const letter = describeDeadLetter({
      ...base,
      knativeerrorcode: '503 <script>',
      knativeerrordest: 'http://a\u0000b\u001b[31m',
    });
    assert.doesNotMatch(letter.content.message, /HTTP|script/);
    assert.ok(
      [...letter.content.message].every(ch => ch.charCodeAt(0) >= 0x20),
      'no control characters in the message',
    );
  });

  it('a genuine letter still says where it failed and what the subscriber answered', () => {
    const letter = describeDeadLetter({
      ...base,
      knativeerrordata: Buffer.from('{"error":"etcd member 3 unreachable"}').toString('base64'),
      kind: 'EtcdMember',
      name: 'example-1',
      namespace: 'team-a',
      apiversion: 'etcdfn.io/v1alpha1',
    });
    assert.match(letter.content.message, /EtcdMember team-a\/example-1/);
    assert.match(letter.content.message, /reconcile-member\.etcdfn-system/);
    assert.match(letter.content.message, /HTTP 503/);
    assert.match(letter.content.message, /etcd member 3 unreachable/);
  });
});

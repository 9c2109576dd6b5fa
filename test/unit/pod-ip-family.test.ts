import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { describe, it } from 'node:test';
import { podIPFamily } from '../../shared/runtime/pod-ip-family.ts';

const nic = (address: string, internal = false): NetworkInterfaceInfo =>
  ({
    address,
    family: address.includes(':') ? 'IPv6' : 'IPv4',
    internal,
    netmask: '',
    mac: '00:00:00:00:00:00',
    cidr: null,
  }) as NetworkInterfaceInfo;

const LO = [nic('127.0.0.1', true), nic('::1', true)];

describe('the family of Pod IPs (ETCDFN_POD_IP_FAMILY, else the operator Pod own addresses)', () => {
  const cases: { name: string; setting?: string; eth0: NetworkInterfaceInfo[]; want: string }[] = [
    { name: 'IPv4 Pod', eth0: [nic('10.244.1.7'), nic('fe80::1')], want: 'IPv4' },
    { name: 'IPv6-only Pod', eth0: [nic('fd00:10:244::7'), nic('fe80::1')], want: 'IPv6' },
    {
      name: 'dual-stack Pod: IPv4 unless told',
      eth0: [nic('10.244.1.7'), nic('fd00:10:244::7')],
      want: 'IPv4',
    },
    {
      name: 'dual-stack, IPv6 first, told so',
      setting: 'IPv6',
      eth0: [nic('fd00:10:244::7'), nic('10.244.1.7')],
      want: 'IPv6',
    },
    { name: 'the setting in any case', setting: 'ipv4', eth0: [nic('fd00:10:244::7')], want: 'IPv4' },
    {
      name: 'the setting with spaces around it',
      setting: ' IPv6 \n',
      eth0: [nic('10.244.1.7')],
      want: 'IPv6',
    },
    { name: 'a blank setting: the addresses', setting: '  ', eth0: [nic('fd00:10:244::7')], want: 'IPv6' },
    {
      name: 'a global IPv6 address with fe80 inside it is global',
      eth0: [nic('2001:db8::fe80:1'), nic('fe80::1')],
      want: 'IPv6',
    },
    { name: 'only link-local IPv6: IPv4', eth0: [nic('fe80::1')], want: 'IPv4' },
    { name: 'loopback only (a test): IPv4', eth0: [], want: 'IPv4' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(podIPFamily(c.setting, { lo: LO, eth0: c.eth0 }), c.want);
    });
  }

  it('a value that names no family stops the function from starting, naming the setting', () => {
    assert.throws(
      () => podIPFamily('inet6', { lo: LO }),
      /ETCDFN_POD_IP_FAMILY: "inet6" is not IPv4 or IPv6/,
    );
    // At most 40 characters of it.
    assert.throws(
      () => podIPFamily(`${'x'.repeat(40)}yyy`, { lo: LO }),
      new RegExp(`^Error: ETCDFN_POD_IP_FAMILY: "${'x'.repeat(40)}" is not IPv4 or IPv6$`),
    );
  });
});

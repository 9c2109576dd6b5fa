// The adapter as one object bound to connection options, so callers can take an `EtcdAdapter` and
// tests can hand them a fake.
import type { EtcdConnectionOptions } from './connection.ts';
import { moveLeader } from './leader.ts';
import type { MoveLeaderResult } from './leader.ts';
import { addLearner, listMembers, promote, remove } from './members.ts';
import type { AddLearnerResult, ListMembersResult, PromoteResult, RemoveResult } from './members.ts';
import { compact, defragment, disarmAlarm, healthRead, listAlarms } from './maintenance.ts';
import type { Alarm, AlarmsResult, CompactResult, DefragmentResult, HealthResult } from './maintenance.ts';
import { enableDowngrade, storageState } from './downgrade.ts';
import type { EnableDowngradeResult, StorageStateResult } from './downgrade.ts';
import { snapshot } from './snapshot.ts';
import type { SnapshotResult } from './snapshot.ts';
import { clusterStatus, memberStatus } from './status.ts';
import type { EndpointStatus, MemberStatusResult } from './status.ts';

export interface EtcdAdapter {
  listMembers(endpoints: readonly string[]): Promise<ListMembersResult>;
  addLearner(endpoints: readonly string[], peerURL: string): Promise<AddLearnerResult>;
  promote(endpoints: readonly string[], id: string): Promise<PromoteResult>;
  remove(endpoints: readonly string[], id: string): Promise<RemoveResult>;
  moveLeader(endpoints: readonly string[], toId: string): Promise<MoveLeaderResult>;
  memberStatus(endpoint: string): Promise<MemberStatusResult>;
  clusterStatus(endpoints: readonly string[]): Promise<EndpointStatus[]>;
  snapshot(endpoint: string): Promise<SnapshotResult>;
  listAlarms(endpoints: readonly string[]): Promise<AlarmsResult>;
  disarmAlarm(endpoints: readonly string[], alarm: Alarm): Promise<AlarmsResult>;
  compact(endpoints: readonly string[]): Promise<CompactResult>;
  defragment(endpoint: string): Promise<DefragmentResult>;
  healthRead(endpoints: readonly string[]): Promise<HealthResult>;
  storageState(endpoint: string): Promise<StorageStateResult>;
  enableDowngrade(endpoints: readonly string[], version: string): Promise<EnableDowngradeResult>;
}

export function createEtcdAdapter(options: EtcdConnectionOptions = {}): EtcdAdapter {
  return {
    listMembers: endpoints => listMembers(endpoints, options),
    addLearner: (endpoints, peerURL) => addLearner(endpoints, peerURL, options),
    promote: (endpoints, id) => promote(endpoints, id, options),
    remove: (endpoints, id) => remove(endpoints, id, options),
    moveLeader: (endpoints, toId) => moveLeader(endpoints, toId, options),
    memberStatus: endpoint => memberStatus(endpoint, options),
    clusterStatus: endpoints => clusterStatus(endpoints, options),
    snapshot: endpoint => snapshot(endpoint, options),
    listAlarms: endpoints => listAlarms(endpoints, options),
    disarmAlarm: (endpoints, alarm) => disarmAlarm(endpoints, alarm, options),
    compact: endpoints => compact(endpoints, undefined, options),
    defragment: endpoint => defragment(endpoint, options),
    healthRead: endpoints => healthRead(endpoints, options),
    storageState: endpoint => storageState(endpoint, options),
    enableDowngrade: (endpoints, version) => enableDowngrade(endpoints, version, options),
  };
}

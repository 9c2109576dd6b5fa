// The vocabulary of the space concern (NOSPACE, defragmentation, volume growth): what a member says of
// its database. No decision here, and no import of a decider.

/** What one member says of its database file (etcd's Status call). */
export interface MemberSpace {
  dbSize: number;
  dbSizeInUse: number;
}

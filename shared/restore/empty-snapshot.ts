// The smallest valid etcd snapshot: an empty etcd 3.4.23 store (20,512 bytes, gzip + base64),
// restorable by etcdctl 3.4 and etcdutl 3.5+. The member Pod's restore step (an etcd image, no
// shell) always runs `snapshot restore`; when the data directory was already restored, the fetch
// step hands it this file instead of the real snapshot and the commit step throws the result away.
import { gunzipSync } from 'node:zlib';

const EMPTY_SNAPSHOT_GZ_BASE64 = [
  'H4sIAAAAAAACA+3aP2gTURwH8Ls0xirFP4PgVnluEtN7OZv0bhJ0EVwMVhHRcsl70uBdUu5eCioORd2cXLp2EHQVdHESQXBU',
  '6KIgIh06ZVNXfef9PHMBewFrLfb7CS8vv7z3cu+S6fuIYSSK1PffT/QL8YsDSV0wsr6RXVTvpn7t0+tp5+HcigEAAAAAAAAA',
  '2475h/m/RP3L5XfHrA9iCd8oAAAAAAAAwPZTSPu96XnAim5xvj9C9TM6HzhNdV+3PQPjJTNbT5rJ/wJOUX1JP40NjPtm9vOX',
  'aP5zqqt6U/sHxs8VkuvHted7YZB3M15Pzf9+jpm+js84JnQbpzUNudiO2t0ODZs/3uv6MhrlgrORDHMntvxepGQ46ub20S9B',
  'yy7oK+jt2ZUTFeu6vJF3MV96kcybFMigueHGszuK203dmsKTTrPZ4lwI27HELdYWzOV2rTZj2Taf5rzOHYvXLafMFqQMZxtn',
  'I+ZeZvNKLbhTU7xar1j6wd2qPWNxdqXMOl4gmcuEvOb1fMXKrOW3ZUdtsLDu6IW36QbmQhl0F6XIv1/l5c0BAAAAAAD4D439',
  'xfz/s64N5f8zQ/n/Ks1/QPW6mc3/pR2U/xP/MNw3tiLcI7QDAAAAAABstWKaoopp/j9pZPP7xaHzAH9o/I7xK6+PGHA3J71m',
  'po2aJQEAAAAAAAB2nvU36rw6unr4nvPx8fiXQ/eXnx58cvft2iPx+cXXV8dXJ78DDxJS/SBQAAA=',
].join('');

export function emptySnapshot(): Buffer {
  return gunzipSync(Buffer.from(EMPTY_SNAPSHOT_GZ_BASE64, 'base64'));
}

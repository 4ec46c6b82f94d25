// Package jsstore is the storage.Backend on NATS JetStream (DESIGN.md D11,
// design/distributed.md §4-§6): dsd's engine decides, jsstore makes each decided change
// durable on a quorum of JetStream replicas and serves the committed-state reads.
//
// # Layout
//
// A store has P partitions, each one JetStream stream "<Prefix>P<k>" (file storage,
// Replicas replicas, limits retention with no limit, rollups, direct get, 60 s dedup
// window). With root r = lower(Prefix), partition k holds the subjects:
//
//	r.<k>.<sid>        the log of incarnation sid (16 hex digits): one frame per commit
//	                   group that touched it, each published with a compare-and-set on this
//	                   literal subject (Nats-Expected-Last-Subject-Sequence) and a unique
//	                   Nats-Msg-Id ("<node>-<open nonce>-<counter>")
//	r.<k>.<sid>.c      staged chunks of a frame's data above ChunkBytes (no CAS, unique
//	                   Msg-Id); the frame that lists their sequences is the commit point,
//	                   chunks of a frame that never committed are garbage freed with sid
//	r.<k>.<sid>.m      checkpoint: the fold of the log up to a frame seq, rolled up
//	                   (Nats-Rollup: sub) so only the newest is kept
//	r.<k>.n.<hex name> the binding of a name "{bucket}/{stream}" to a sid, or its unbinding
//	                   (CAS on the subject, rolled up)
//	r.<k>.b.<hex id>   a bucket record, or its deletion (CAS, rolled up)
//	r.<k>.h            the highest id collected (rolled up), so LastSID never goes back
//	r.<k>.s.<hex key>  a subscription record, link record or the keys (storage.Change.Subs)
//	                   of a bucket that lives here, or its deletion (CAS, rolled up)
//	r.<k>.j            the journal: the subscription records a commit group wrote outside
//	                   its frames (CAS, rolled up; kv.go)
//	r.<k>.p            probe writes (rolled up)
//
// A name lives in partition PartitionOf(bucket, stream), a stable FNV-1a hash of
// "{bucket}/{stream}" mod P; its incarnation's log lives in the same partition (forks
// too: a fork's inherited data is read from its source's partition by sid). A bucket
// record lives in partition PartitionOfBucket(id).
//
// # Frames
//
// A frame is uvarint(len(head)) | head (JSON) | data. The head lists the frame's parts in
// the order of the group's changes: create, snapshot put/drop, messages (offset, flags
// and length of each; their bytes are in data), records, producer state and receipt,
// retention mark, meta, delete; a snapshot body is in data too. Producer state travels in
// the same message as the data it describes, so the two are atomic by construction. The
// tail, record tail, producers, receipts, snapshots and deletion of an incarnation are
// the fold of its log.
//
// # Subscription records
//
// A change's subscription records (base protocol §6-§7, D10) commit in one message with
// the rest of the change: in its incarnation's frame (a pull-wake event's append and the
// state that issues it), else in the partition's journal message of the group; they are
// then materialized on their keys' subjects. Opening a partition takes, per key, the put
// with the highest sequence among its subject, the journal and the frames after the
// checkpoints, so nothing committed is lost between the commit and the materialization
// (kv.go). The keys of spaces subs and links live in their bucket's partition, the keys
// space in partition 0; a change whose records are in another partition than its frame
// journals them after the frame (a cluster's stores have one partition each).
//
// # Commit
//
// Commit groups the changes by incarnation and publishes one frame per incarnation
// concurrently (phase 1); then, for the changes whose frames were all acknowledged, the
// metas they set on further incarnations (fork sources' reference counts, phase 1b), then
// the name bindings and bucket records (phase 2). A name is bound only when its binding
// points at a live incarnation, so a create whose phase 2 failed leaves an unreachable
// incarnation (deleted by OpenPartition once older than Options.OrphanAge, then
// collected) and a delete whose phase 2 failed leaves a name without a stream. Results
// are per change: a group is not atomic across incarnations.
//
// Outcomes of one publish (design §4.4): an ack (also "duplicate") is durable; the
// in-flight rejection 10164 is resent at once (it is also raised spuriously right after
// an ack); 10071 "wrong last sequence" looks up the message after the expected sequence:
// if it carries our Msg-Id we committed, otherwise storage.ErrConflict (another writer:
// the stream is reloaded from the log and Options.OnConflict is told); a timeout or lost
// connection is in doubt and the identical message (same Msg-Id, same expectation) is
// resent every 200 ms until Options.ResolveTimeout, then storage.ErrUnknown.
//
// # Reads
//
// The store keeps, per incarnation, the fold of its log without the data: meta, tail,
// producers and receipts, snapshot body locations and an offset index (one entry per
// IndexBytes of data: the frame that starts there, with its first record ordinal). A read
// at an offset or record starts at the index entry before it and fetches frames in
// batches by direct get from any replica, bounded by the incarnation's last committed
// frame; a replica that lags answers short, and the gap is filled from the leader. Single
// gets (checkpoints, bindings, the in-doubt check) always go to the leader. Recent frames
// are cached (Options.FrameCacheBytes).
//
// Opening a partition lists its subjects, reads each binding and bucket record, and
// loads each incarnation from its checkpoint (rewritten every CheckpointFrames frames or
// CheckpointBytes of log) and the frames after it. Trim writes a checkpoint, then purges
// the frames wholly below the retention boundary (and never a snapshot body's frame);
// Collect purges a deleted incarnation's chunks, its log, its checkpoint and its name's
// subject when no stream took the name since: nothing of it is left.
//
// # Where this differs from design/distributed.md
//
//   - Large frames are staged chunks committed by one CAS frame, not atomic batches: the
//     in-doubt resend of one message is the path that is tested (§10), and it stays the
//     only one. Orphaned chunks of a frame that never committed are freed with sid.
//   - Name and bucket subjects are hashes of the name (SHA-256, 128 bits) with the name
//     in the payload, so a long name never makes a long subject.
//   - An incarnation lives in its name's partition, forks too; a fork's source may be in
//     another partition (read by sid). Its reference count is written after the fork's
//     create or delete frame is acknowledged: a failed change leaves at worst a count too
//     high (the source is kept), never too low.
//   - No RePublish: live readers are woken by the owner's engine after the ack.
//
// # Guarantees
//
// An acknowledged commit is fsynced on a quorum of replicas: the servers must run with
// sync_interval: always. Open refuses otherwise (ErrSyncNotAlways), checking what it can:
//
//   - embedded servers (Options.Servers, CheckServer): server.JetStreamConfig().SyncAlways;
//   - an external cluster (Options.SysConn, CheckVarz): a connection in the system account
//     asks every server for its varz ($SYS.REQ.SERVER.PING.VARZ) and reads
//     jetstream.config.sync_always; no answer is a refusal too;
//   - each partition stream: file storage, the configured replicas, and no
//     persist_mode: async (which acknowledges before it persists).
//
// Not detectable from here: a server restarted later with another setting (checked at
// Open only) and a filesystem that does not fsync honestly.
//
// Nothing is applied twice: every frame carries a CAS on its incarnation's last
// sequence and a Msg-Id unique to one decision, and a resend is the identical message.
package jsstore

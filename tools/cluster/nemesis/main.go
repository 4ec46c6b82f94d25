// Command nemesis kills and restarts nodes of a local dsd cluster (tools/cluster/cluster.sh)
// while a check runs against it: in turn the JetStream leader of a partition's stream, the
// partition's owner (the holder of its lease) and a follower (a replica that is neither),
// one node down at a time, each restarted after --down and given time to rejoin.
//
//	nemesis --nats nats://127.0.0.1:P1,nats://...:P2,... --bucket default --partitions 6 \
//	        --kills 6 --down 3s --settle 4s --deadline 4m --cluster tools/cluster/cluster.sh
//
// It exits 0 after --kills kills, 1 if the deadline passed first or a node did not come
// back; it prints one line per kill and "nemesis: K kills" at the end. A file named by
// --stop-file, once it exists, ends it early (the check finished).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dsd-project/dsd/cluster"
)

type opts struct {
	natsURLs, bucket, script, stopFile string
	roles                              string
	startDelay                         time.Duration
	partitions, kills                  int
	down, settle, deadline             time.Duration
}

func main() {
	var o opts
	flag.StringVar(&o.natsURLs, "nats", "", "comma-separated NATS client URLs of the nodes")
	flag.StringVar(&o.bucket, "bucket", "default", "bucket whose partition is attacked")
	flag.IntVar(&o.partitions, "partitions", 6, "the cluster's --partitions")
	flag.IntVar(&o.kills, "kills", 6, "number of kills")
	flag.StringVar(&o.roles, "roles", "leader,owner,follower", "the victims' roles, in turn: leader (of the partition's JetStream stream), owner (lease holder), follower")
	flag.DurationVar(&o.startDelay, "start-delay", 0, "wait this long before the first kill")
	flag.DurationVar(&o.down, "down", 3*time.Second, "how long a killed node stays down")
	flag.DurationVar(&o.settle, "settle", 4*time.Second, "pause after a node is back, before the next kill")
	flag.DurationVar(&o.deadline, "deadline", 4*time.Minute, "give up after this long")
	flag.StringVar(&o.script, "cluster", "tools/cluster/cluster.sh", "the cluster script (kill N, start-node N)")
	flag.StringVar(&o.stopFile, "stop-file", "", "stop early once this file exists")
	flag.Parse()
	n, err := run(o)
	fmt.Printf("nemesis: %d kills\n", n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nemesis:", err)
		os.Exit(1)
	}
}

func run(o opts) (int, error) {
	nc, err := nats.Connect(o.natsURLs, nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	k := cluster.PartitionOf(o.bucket, o.partitions)
	stream := fmt.Sprintf("DSD%dP0", k)
	end := time.Now().Add(o.deadline)
	roles := strings.Split(o.roles, ",")
	kills := 0
	time.Sleep(o.startDelay)
	for kills < o.kills {
		if time.Now().After(end) {
			return kills, fmt.Errorf("deadline passed after %d of %d kills", kills, o.kills)
		}
		if o.stopFile != "" {
			if _, err := os.Stat(o.stopFile); err == nil {
				return kills, nil
			}
		}
		role := roles[kills%len(roles)]
		victim, err := pick(js, stream, k, role)
		if err != nil || victim == "" {
			time.Sleep(time.Second)
			continue
		}
		fmt.Printf("nemesis: SIGKILL %s (%s of partition %d, stream %s)\n", victim, role, k, stream)
		if err := script(o.script, "kill", victim); err != nil {
			return kills, err
		}
		kills++
		time.Sleep(o.down)
		if err := script(o.script, "start-node", victim); err != nil {
			return kills, err
		}
		if err := awaitReplicas(js, stream, end); err != nil {
			return kills, err
		}
		time.Sleep(o.settle)
	}
	return kills, nil
}

// pick names the node (its number, "1".."3") in the given role of partition k.
func pick(js jetstream.JetStream, stream string, k int, role string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil || info.Cluster.Leader == "" {
		return "", err
	}
	kv, err := js.KeyValue(ctx, cluster.ControlBucket)
	if err != nil {
		return "", err
	}
	owner, err := cluster.LeaseHolder(ctx, kv, k)
	if err != nil {
		return "", err
	}
	leader := info.Cluster.Leader
	switch role {
	case "leader":
		return num(leader), nil
	case "owner":
		return num(owner), nil
	}
	for _, r := range info.Cluster.Replicas {
		if r.Name != leader && r.Name != owner {
			return num(r.Name), nil
		}
	}
	return "", nil
}

func num(node string) string { return strings.TrimPrefix(node, "n") }

// awaitReplicas waits until the stream has a leader and every replica is current again.
func awaitReplicas(js jetstream.JetStream, stream string, end time.Time) error {
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s, err := js.Stream(ctx, stream)
		if err == nil {
			info, err := s.Info(ctx)
			if err == nil && info.Cluster != nil && info.Cluster.Leader != "" && len(info.Cluster.Replicas) == 2 &&
				info.Cluster.Replicas[0].Current && info.Cluster.Replicas[1].Current {
				cancel()
				return nil
			}
		}
		cancel()
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("stream %s did not get all replicas back before the deadline", stream)
}

func script(path string, args ...string) error {
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

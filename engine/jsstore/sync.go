package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// checkSync refuses JetStream servers that acknowledge before they fsync (design §3).
func checkSync(ctx context.Context, o Options) error {
	switch {
	case o.UnsafeSkipSyncCheck:
		return nil
	case len(o.Servers) > 0:
		for _, s := range o.Servers {
			if err := CheckServer(s); err != nil {
				return err
			}
		}
		return nil
	case o.SysConn != nil:
		return CheckVarz(ctx, o.SysConn, time.Second)
	}
	return errors.New("jsstore: cannot check that JetStream runs with sync_interval: always: " +
		"give Options.Servers (embedded servers) or Options.SysConn (a system-account connection)")
}

// CheckServer returns ErrSyncNotAlways unless the embedded server s runs JetStream with
// sync_interval: always (server.Options.SyncAlways).
func CheckServer(s *server.Server) error {
	c := s.JetStreamConfig()
	if c == nil {
		return fmt.Errorf("jsstore: server %s does not run JetStream", s.Name())
	}
	if !c.SyncAlways {
		return fmt.Errorf("%w (server %s syncs every %s)", ErrSyncNotAlways, s.Name(), c.SyncInterval)
	}
	return nil
}

// CheckVarz asks every server reachable from nc, a connection in the system account,
// for its varz ($SYS.REQ.SERVER.PING.VARZ) and returns ErrSyncNotAlways when one reports
// jetstream.config.sync_always false; an error too when no server answers within wait.
func CheckVarz(ctx context.Context, nc *nats.Conn, wait time.Duration) error {
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$SYS.REQ.SERVER.PING.VARZ", inbox, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	seen := 0
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			break
		}
		var r struct {
			Server struct {
				Name string `json:"name"`
			} `json:"server"`
			Data struct {
				JetStream struct {
					Config *struct {
						SyncAlways bool `json:"sync_always"`
					} `json:"config"`
				} `json:"jetstream"`
			} `json:"data"`
		}
		if json.Unmarshal(m.Data, &r) != nil || r.Data.JetStream.Config == nil {
			continue
		}
		seen++
		if !r.Data.JetStream.Config.SyncAlways {
			return fmt.Errorf("%w (server %s)", ErrSyncNotAlways, r.Server.Name)
		}
	}
	if seen == 0 {
		return errors.New("jsstore: no JetStream server answered the varz ping; is the connection in the system account?")
	}
	return nil
}

package cluster

import (
	"fmt"
	"time"
)

// Ready reports whether every partition is served: owned here (engine open, lease valid)
// or held by another node last seen in the lease bucket (D12 /readyz: "cluster:
// partitions owned or reachable"). The error names the first partition without a holder.
func (n *Node) Ready() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k := 0; k < n.cfg.Partitions; k++ {
		if o := n.owned[k]; o != nil {
			if o.eng == nil || !time.Now().Before(o.valid) {
				return fmt.Errorf("partition %d is being opened here", k)
			}
			continue
		}
		if n.remote[k].Node == "" {
			return fmt.Errorf("partition %d has no owner yet", k)
		}
	}
	return nil
}

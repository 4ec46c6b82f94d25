package jsstore

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"sync"

	"github.com/dsd-project/dsd/engine/storage"
)

// head is a frame's description of its parts; their bytes follow it (or, above
// ChunkBytes, sit in the staged chunks it lists).
type head struct {
	Parts  []part   `json:"p"`
	Chunks []uint64 `json:"c,omitempty"` // seqs of the chunks holding the data, in order
	Size   int      `json:"n,omitempty"` // data length when chunked
}

// part is what one change did to one incarnation, in the order it applies.
type part struct {
	Create   bool                 `json:"cr,omitempty"`
	Snap     *snapPart            `json:"sp,omitempty"`
	Drop     *uint64              `json:"sd,omitempty"`
	Msgs     []msgPart            `json:"m,omitempty"`
	At       int                  `json:"at,omitempty"` // data position of the snapshot body, then the messages
	Records  bool                 `json:"r,omitempty"`
	Rec0     uint64               `json:"r0,omitempty"`
	Producer *storage.ProducerPut `json:"pr,omitempty"`
	Retained bool                 `json:"ret,omitempty"`
	Meta     *storage.Meta        `json:"meta,omitempty"`
	Delete   bool                 `json:"del,omitempty"`
	KV       []kvPut              `json:"kv,omitempty"` // the change's subscription records (kv.go)
}

type snapPart struct {
	Off uint64 `json:"o"`
	Len int    `json:"n"`
}

// msgPart is one stored message: its offset and the length of its value (flags byte
// and canonical bytes).
type msgPart struct {
	Off uint64 `json:"o"`
	Len int    `json:"n"`
}

// frame is a decoded frame: its log sequence, head and data.
type frame struct {
	seq  uint64
	head head
	data []byte
}

// addChange appends change c's own parts for its incarnation to the frame being built.
func addChange(h *head, data *[]byte, c *storage.Change) {
	p := part{Create: c.Bind != nil, Drop: c.DropSnapshot, Records: c.Records, Rec0: c.FirstRecord,
		Producer: c.Producer, Retained: c.Retained, Meta: c.Meta, At: len(*data)}
	if c.PutSnapshot != nil {
		p.Snap = &snapPart{Off: c.PutSnapshot.Offset, Len: len(c.PutSnapshot.Body)}
		*data = append(*data, c.PutSnapshot.Body...)
	}
	for _, m := range c.Messages {
		p.Msgs = append(p.Msgs, msgPart{Off: m.Off, Len: len(m.Val)})
		*data = append(*data, m.Val...)
	}
	if !p.Records {
		p.Rec0 = 0
	}
	h.Parts = append(h.Parts, p)
}

// encodeFrame lays a frame out: uvarint(len(head)), head, data.
func encodeFrame(h *head, data []byte) []byte {
	hj, _ := json.Marshal(h)
	out := binary.AppendUvarint(make([]byte, 0, len(hj)+len(data)+binary.MaxVarintLen64), uint64(len(hj)))
	out = append(out, hj...)
	return append(out, data...)
}

var errBadFrame = errors.New("jsstore: malformed frame")

// decodeHead splits a frame message into its head and inline data.
func decodeHead(b []byte) (head, []byte, error) {
	var h head
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return h, nil, errBadFrame
	}
	if err := json.Unmarshal(b[w:w+int(n)], &h); err != nil {
		return h, nil, errBadFrame
	}
	return h, b[w+int(n):], nil
}

// snapBody returns part p's snapshot body within data.
func (p *part) snapBody(data []byte) []byte {
	return data[p.At : p.At+p.Snap.Len]
}

// msgStart is the data position of p's first message.
func (p *part) msgStart() int {
	if p.Snap != nil {
		return p.At + p.Snap.Len
	}
	return p.At
}

// frameCache keeps decoded frames by (partition, seq), up to a byte budget; frames never
// change once committed.
type frameCache struct {
	mu    sync.Mutex
	max   int
	size  int
	items map[[2]uint64]*frame
	order [][2]uint64
}

func newFrameCache(max int) *frameCache {
	return &frameCache{max: max, items: map[[2]uint64]*frame{}}
}

func (c *frameCache) get(k int, seq uint64) *frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items[[2]uint64{uint64(k), seq}]
}

func (c *frameCache) put(k int, f *frame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]uint64{uint64(k), f.seq}
	if _, ok := c.items[key]; ok {
		return
	}
	c.items[key] = f
	c.order = append(c.order, key)
	c.size += len(f.data)
	for c.size > c.max && len(c.order) > 1 {
		old := c.order[0]
		c.order = c.order[1:]
		if o := c.items[old]; o != nil {
			c.size -= len(o.data)
			delete(c.items, old)
		}
	}
}

package difftest

import (
	"fmt"
	"strings"

	"github.com/dsd-project/dsd/model"
)

// Kind is a short name of a command's request kind ("POST", "BATCH", ...), for tallies.
func Kind(c model.Command) string {
	if r, ok := c.(model.ReadStream); ok && (r.Record != nil || r.TailRecords != nil) {
		return "GET-REC"
	}
	switch c.(type) {
	case model.CreateBucket, model.CreateStream:
		return "PUT"
	case model.GetBucket, model.ReadStream:
		return "GET"
	case model.DeleteBucket, model.DeleteStream:
		return "DELETE"
	case model.AppendStream:
		return "POST"
	case model.HeadStream:
		return "HEAD"
	case model.GetAttrs:
		return "GET-ATTRS"
	case model.PutAttrs:
		return "PUT-ATTRS"
	case model.AppendBatch:
		return "BATCH"
	case model.PublishSnapshot:
		return "PUT-SNAP"
	case model.GetSnapshot:
		return "GET-SNAP"
	case model.DeleteSnapshot:
		return "DEL-SNAP"
	case model.SetRetention:
		return "RETAIN"
	case model.Bootstrap:
		return "BOOTSTRAP"
	}
	return strings.ToUpper(strings.TrimPrefix(fmt.Sprintf("%T", c), "model."))
}

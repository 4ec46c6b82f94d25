package model

import "time"

// advertiseTarget sets Extensions on every response that targets a live JSON stream,
// before or after the command: creates, DELETE, refusals and every sub-resource
// (D5 amendment, extension §6 capability token).
func advertiseTarget(before, after State, cmd Command, res Result, now time.Time) Result {
	key, ok := TargetStream(cmd)
	if !ok || res.Extensions {
		return res
	}
	for _, s := range []State{before, after} {
		if v, live := s.Stream(key, now); live && IsJSON(v.MediaType) {
			res.Extensions = true
		}
	}
	return res
}

// TargetStream is the stream a command targets; false for bucket commands.
func TargetStream(cmd Command) (StreamKey, bool) {
	switch c := cmd.(type) {
	case CreateStream:
		return c.Stream, true
	case AppendStream:
		return c.Stream, true
	case ReadStream:
		return c.Stream, true
	case HeadStream:
		return c.Stream, true
	case DeleteStream:
		return c.Stream, true
	case GetAttrs:
		return c.Stream, true
	case PutAttrs:
		return c.Stream, true
	case AppendBatch:
		return c.Stream, true
	case PublishSnapshot:
		return c.Stream, true
	case GetSnapshot:
		return c.Stream, true
	case DeleteSnapshot:
		return c.Stream, true
	case SetRetention:
		return c.Stream, true
	case Bootstrap:
		return c.Stream, true
	}
	return StreamKey{}, false
}

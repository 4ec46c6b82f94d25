package linearizability

// stepRecordRead checks a record-aware read of a JSON stream (extension §6.6, §6.7):
// "tail" (tail_records larger than N) starts at F and returns every retained record,
// "now" is the empty read at N; both report F, the range read [Start, Next) and, as
// Stream-Next-Offset, the boundary of Next (here the tail). The records' canonical
// bytes must be the retained content, one record per message.
func stepRecordRead(s State, in Input, out Output) (bool, State) {
	switch {
	case out.Unknown():
		return true, s
	case !s.Exists:
		return out.Status == 404, s
	case out.Status != 200 || out.Closed != s.Closed || !isU(out.RecFirst, s.RetRecs) || !isU(out.RecNext, s.Recs):
		return false, s
	case in.Record == "now":
		if !isU(out.RecStart, s.Recs) || out.Len != 0 || out.Msgs != 0 {
			return false, s
		}
	default:
		n, d := s.retained()
		if !isU(out.RecStart, s.RetRecs) || out.Len != n || out.Digest != d || out.Msgs != s.Recs-s.RetRecs {
			return false, s
		}
	}
	return s.atTail(out.Offset)
}

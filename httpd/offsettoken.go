package httpd

import "github.com/dsd-project/dsd/model"

// ErrBadOffsetToken is an offset where only a D2 token fits (snapshot and retention paths,
// acks): the sentinels -1 and now name read positions, not offsets.
var ErrBadOffsetToken = &model.Error{Code: "INVALID_OFFSET", Msg: "the offset must be a token of the form 0000000000000000_0000000000000000 (-1 and now are read positions, not offsets here)"}

// parseOffsetToken parses a D2 offset token (model.ParseOffset). Errors: ErrBadOffsetToken.
func parseOffsetToken(s string) (model.Offset, error) {
	o, err := model.ParseOffset(s)
	if err != nil {
		return 0, ErrBadOffsetToken
	}
	return o, nil
}

package linearizability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dsd-project/dsd/model"
)

// SubClient drives one pull-wake subscription over HTTP on the flat surface: {base}/v1/
// stream/{stream} and {base}/v1/stream/__ds/subscriptions/{id}. Offsets are read as D2
// tokens (the model needs positions; dsd's profile).
type SubClient struct {
	Base, Stream, ID string
	HTTP             *http.Client
}

func (c *SubClient) subURL(action string) string {
	return c.Base + "/v1/stream/__ds/subscriptions/" + c.ID + "/" + action
}

// Append posts body to the linked stream.
func (c *SubClient) Append(body string) (SubResult, error) {
	resp, err := c.HTTP.Post(c.Base+"/v1/stream/"+c.Stream, "text/plain", strings.NewReader(body))
	if err != nil {
		return SubResult{}, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	out := SubResult{Status: resp.StatusCode}
	if o, err := model.ParseOffset(resp.Header.Get("Stream-Next-Offset")); err == nil {
		out.Tail = uint64(o)
	}
	return out, nil
}

// Claim claims as worker; token is the claim's bearer token (200 only).
func (c *SubClient) Claim(worker string) (out SubResult, token string, err error) {
	var body struct {
		WakeID     string `json:"wake_id"`
		Generation uint64 `json:"generation"`
		Token      string `json:"token"`
		Streams    []struct {
			Path string `json:"path"`
			Tail string `json:"tail_offset"`
		} `json:"streams"`
		Error struct {
			Code   string `json:"code"`
			Holder string `json:"current_holder"`
		} `json:"error"`
	}
	out.Status, err = c.post("claim", "", map[string]string{"worker": worker}, &body)
	out.Code, out.Holder, out.Gen, out.WakeID = body.Error.Code, body.Error.Holder, body.Generation, body.WakeID
	for _, s := range body.Streams {
		if o, perr := model.ParseOffset(s.Tail); perr == nil && s.Path == c.Stream {
			out.Tail = uint64(o)
		}
	}
	return out, body.Token, err
}

// Ack acks offset under fence f with token.
func (c *SubClient) Ack(token string, f model.Fence, offset uint64, done bool) (SubResult, error) {
	var body struct {
		NextWake bool `json:"next_wake"`
		Error    struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	req := map[string]any{"wake_id": f.WakeID, "generation": f.Gen, "done": done,
		"acks": []map[string]string{{"stream": c.Stream, "offset": model.Offset(offset).String()}}}
	st, err := c.post("ack", token, req, &body)
	return SubResult{Status: st, Code: body.Error.Code, NextWake: body.NextWake}, err
}

// Release releases under fence f with token.
func (c *SubClient) Release(token string, f model.Fence) (SubResult, error) {
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	st, err := c.post("release", token, map[string]any{"wake_id": f.WakeID, "generation": f.Gen}, &body)
	return SubResult{Status: st, Code: body.Error.Code}, err
}

func (c *SubClient) post(action, token string, v, into any) (int, error) {
	b, _ := json.Marshal(v)
	req, _ := http.NewRequest(http.MethodPost, c.subURL(action), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 && json.Unmarshal(data, into) != nil {
		return resp.StatusCode, fmt.Errorf("%s: not JSON: %q", action, data)
	}
	return resp.StatusCode, nil
}

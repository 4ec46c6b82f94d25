package conformance

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The reserved subscription APIs (base protocol §6-§7): the namespace is {root}__ds/, the
// root being the flat prefix or /{bucket}/; paths in bodies are root-relative (the stream
// names the kit uses).

// subsRoot is {root}__ds/ on the configured surface.
func (s *S) subsRoot() string {
	if s.rt.cfg.Surface == SurfaceBucketed {
		return s.rt.cfg.BaseURL + "/" + s.rt.bucket + "/__ds/"
	}
	return s.rt.cfg.BaseURL + s.rt.cfg.StreamPath + "__ds/"
}

// subURL is {root}__ds/subscriptions/{id}[/rest].
func (s *S) subURL(id string, rest ...string) string {
	u := s.subsRoot() + "subscriptions/" + url.PathEscape(id)
	for _, r := range rest {
		u += "/" + r
	}
	return u
}

// newSubID is a fresh subscription id, deleted when the spec ends.
func (s *S) newSubID() string {
	id := s.Name("sub")
	s.trackURL(s.subURL(id))
	return id
}

// sendJSON sends v as an application/json body.
func (s *S) sendJSON(method, u string, v any, opts ...Opt) *Response {
	ginkgo.GinkgoHelper()
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return s.Do(method, u, append([]Opt{CT(ctJSON), Body(b)}, opts...)...)
}

// jsonMap decodes a JSON object body (failing the spec otherwise).
func jsonMap(r *Response) map[string]any {
	ginkgo.GinkgoHelper()
	var m map[string]any
	Expect(json.Unmarshal(r.Data, &m)).To(Succeed(), "body %q is not a JSON object", r.Text())
	return m
}

// subLinks is the streams member of a subscription document, by path.
func subLinks(doc map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	list, _ := doc["streams"].([]any)
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			p, _ := m["path"].(string)
			out[p] = m
		}
	}
	return out
}

// putWebhook creates a webhook subscription to wr, skipping the spec (with the reason)
// when the server refuses loopback webhook URLs.
func (s *S) putWebhook(id string, wr *webhookReceiver, streams []string) map[string]any {
	ginkgo.GinkgoHelper()
	r := s.sendJSON("PUT", s.subURL(id), map[string]any{"type": "webhook", "streams": streams,
		"webhook": map[string]any{"url": wr.URL()}, "lease_ttl_ms": 30000})
	if r.StatusCode == 400 {
		ginkgo.Skip("the server refuses loopback webhook URLs or webhooks (dsd: --webhooks --webhook-allow-loopback): " + r.Text())
	}
	Expect(r).To(HaveStatus(201))
	return jsonMap(r)
}

// skipWithoutWebhooks skips the spec (with the reason) when the server refuses webhook
// subscriptions altogether: a safe public URL linked to a stream that never gets data (so
// nothing is ever delivered) is not accepted.
func (s *S) skipWithoutWebhooks() {
	ginkgo.GinkgoHelper()
	r := s.sendJSON("PUT", s.subURL(s.newSubID()), map[string]any{"type": "webhook", "streams": []string{s.Name("never")},
		"webhook": map[string]any{"url": "https://example.com/hook"}})
	if r.StatusCode == 400 {
		ginkgo.Skip("the server refuses webhook subscriptions (dsd: --webhooks): " + r.Text())
	}
}

// errCode is the error code of a D7-shaped body.
func errCode(r *Response) string { return errorCodeOf(r) }

var _ = Section("6", "6-7 Subscriptions", Ext("subscriptions"), func() {
	ConformanceIt(MUST, Reqs{"B-6-08", "B-6-09"}, "publishes Ed25519 keys at __ds/jwks.json with kids derived from the key", func(s *S) {
		r := s.Do("GET", s.subsRoot()+"jwks.json")
		Expect(r).To(HaveStatus(200))
		Expect(r.Get(hContentType)).To(ContainSubstring("application/jwk-set+json"))
		var set struct {
			Keys []map[string]string `json:"keys"`
		}
		Expect(json.Unmarshal(r.Data, &set)).To(Succeed())
		Expect(set.Keys).NotTo(BeEmpty())
		for _, k := range set.Keys {
			Expect(k).To(HaveKeyWithValue("kty", "OKP"))
			Expect(k).To(HaveKeyWithValue("crv", "Ed25519"))
			Expect(k).To(HaveKeyWithValue("alg", "EdDSA"))
			Expect(k["kid"]).To(HavePrefix("ds_"))
			x, err := base64.RawURLEncoding.DecodeString(k["x"])
			Expect(err).NotTo(HaveOccurred())
			Expect(x).To(HaveLen(32))
			// RFC 7638 thumbprint of an OKP key, as both reference servers derive kids.
			sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + k["x"] + `"}`))
			Expect(k["kid"]).To(Equal("ds_"+base64.RawURLEncoding.EncodeToString(sum[:])), "kid is ds_ + the JWK thumbprint")
		}
		Expect(s.Do("GET", s.subsRoot()+"jwks.json")).To(HaveBody(r.Text()), "the key set is stable")
	})

	ConformanceIt(MUST, Reqs{"B-6-03", "B-6-04"}, "creates a subscription (201), re-confirms an identical one (200) and refuses a different one (409)", func(s *S) {
		id := s.newSubID()
		wake := s.Create("wake", CT(ctJSON), Text("[]"))
		body := map[string]any{"type": "pull-wake", "streams": []string{"b", "a"}, "wake_stream": wake.Name, "description": "kit"}
		r := s.sendJSON("PUT", s.subURL(id), body)
		Expect(r).To(HaveStatus(201))
		Expect(r).To(HaveMediaType(ctJSON))
		Expect(r.Text()).NotTo(ContainSubstring("secret"), "no shared secret in any response")
		doc := jsonMap(r)
		Expect(doc).To(HaveKeyWithValue("id", id))
		Expect(doc).To(HaveKeyWithValue("type", "pull-wake"))
		body["streams"], body["lease_ttl_ms"] = []string{"a", "b", "a"}, 30000
		Expect(s.sendJSON("PUT", s.subURL(id), body)).To(HaveStatus(200), "same config: streams reordered, default lease explicit")
		body["description"] = "other"
		r = s.sendJSON("PUT", s.subURL(id), body)
		Expect(r).To(HaveStatus(409))
		for _, bad := range []map[string]any{
			{"type": "pull-wake", "wake_stream": wake.Name},
			{"type": "pull-wake", "streams": []string{"a"}},
			{"type": "pull-wake", "streams": []string{"a"}, "wake_stream": wake.Name, "lease_ttl_ms": 999},
			{"type": "carrier-pigeon", "streams": []string{"a"}},
		} {
			r := s.sendJSON("PUT", s.subURL(s.newSubID()), bad)
			Expect(r).To(HaveStatus(400), "config %v", bad)
		}
	})

	ConformanceIt(MUST, Reqs{"B-6-04", "B-6-09"}, "rejects unsafe webhook URLs with 400 WEBHOOK_URL_REJECTED", func(s *S) {
		s.skipWithoutWebhooks()
		for _, u := range []string{"http://10.0.0.1/hook", "https://169.254.169.254/latest", "https://192.168.1.1/h",
			"ftp://example.com/h"} {
			r := s.sendJSON("PUT", s.subURL(s.newSubID()), map[string]any{"type": "webhook", "streams": []string{"a"},
				"webhook": map[string]any{"url": u}})
			Expect(r).To(HaveStatus(400), "webhook URL %s", u)
			Expect(errCode(r)).To(Equal("WEBHOOK_URL_REJECTED"), "webhook URL %s", u)
		}
	})

	ConformanceIt(MUST, Reqs{"B-6-04"}, "also rejects userinfo, CGNAT, IPv4-mapped private and numeric-host webhook URLs (D10)", Profile("dsd"), func(s *S) {
		s.skipWithoutWebhooks()
		for _, u := range []string{"https://user:pw@example.com/h", "https://100.64.0.1/h",
			"https://[::ffff:10.0.0.1]/h", "https://2130706433/h"} {
			r := s.sendJSON("PUT", s.subURL(s.newSubID()), map[string]any{"type": "webhook", "streams": []string{"a"},
				"webhook": map[string]any{"url": u}})
			Expect(r).To(HaveStatus(400), "webhook URL %s", u)
			Expect(errCode(r)).To(Equal("WEBHOOK_URL_REJECTED"), "webhook URL %s", u)
		}
	})

	ConformanceIt(MUST, Reqs{"B-6-02", "B-6-05"}, "links existing pattern matches at their tails and new matches before their first append", func(s *S) {
		if s.rt.cfg.Surface == SurfaceBucketed {
			ginkgo.Skip("bucketed stream ids have no '/', so a pattern cannot select the kit's streams alone (flat surface only)")
		}
		dir := s.Name("glob")
		flat := func(leaf string) string {
			u := s.rt.cfg.BaseURL + s.rt.cfg.StreamPath + url.PathEscape(dir) + "/" + leaf
			s.trackURL(u)
			return u
		}
		old := s.Do("PUT", flat("old"), CT(ctText), Text("abc"))
		Expect(old).To(HaveStatus(201))
		wake := s.Create("wake", CT(ctJSON), Text("[]"))
		id := s.newSubID()
		Expect(s.sendJSON("PUT", s.subURL(id), map[string]any{"type": "pull-wake", "pattern": dir + "/*",
			"wake_stream": wake.Name})).To(HaveStatus(201))
		links := subLinks(jsonMap(s.Do("GET", s.subURL(id))))
		Expect(links).To(HaveKey(dir + "/old"))
		Expect(links[dir+"/old"]).To(HaveKeyWithValue("link_type", "glob"))
		Expect(links[dir+"/old"]).To(HaveKeyWithValue("acked_offset", old.Get(hNextOffset)), "linked at its tail: no history replay")
		Expect(s.Do("PUT", flat("new"), CT(ctText), Text("x"))).To(HaveStatus(201))
		links = subLinks(jsonMap(s.Do("GET", s.subURL(id))))
		Expect(links).To(HaveKey(dir + "/new"))
		Eventually(s.Ctx, func() int { return len(s.Do("GET", wake.URL, Q("offset", offsetStart)).Data) }).
			WithTimeout(3*time.Second).WithPolling(50*time.Millisecond).Should(BeNumerically(">", 2), "the creating append is pending work: a wake event")
	})

	ConformanceIt(MUST, Reqs{"B-6-06"}, "serves the subscription document, deletes with 204 and forgets it", func(s *S) {
		wake := s.Create("wake", CT(ctJSON), Text("[]"))
		id := s.newSubID()
		Expect(s.sendJSON("PUT", s.subURL(id), map[string]any{"type": "pull-wake", "streams": []string{"x"},
			"wake_stream": wake.Name, "lease_ttl_ms": 5000})).To(HaveStatus(201))
		r := s.Do("GET", s.subURL(id))
		Expect(r).To(HaveStatus(200))
		doc := jsonMap(r)
		Expect(doc).To(HaveKeyWithValue("id", id))
		Expect(doc).To(HaveKeyWithValue("subscription_id", id))
		Expect(doc).To(HaveKeyWithValue("wake_stream", wake.Name))
		Expect(doc).To(HaveKeyWithValue("lease_ttl_ms", BeNumerically("==", 5000)))
		Expect(doc).To(HaveKey("created_at"))
		Expect(doc).To(HaveKey("status"))
		Expect(s.Do("DELETE", s.subURL(id))).To(HaveStatus(204))
		Expect(s.Do("GET", s.subURL(id))).To(HaveStatus(404))
		Expect(s.Do("DELETE", s.subURL(id))).To(HaveStatus(204), "DELETE is idempotent")
		Expect(s.sendJSON("POST", s.subURL(id, "claim"), map[string]any{"worker": "w"})).To(HaveStatus(404), "no action on a deleted subscription")
	})

	ConformanceIt(MUST, Reqs{"B-6-07"}, "adds and removes explicit streams with 204, idempotently", func(s *S) {
		wake := s.Create("wake", CT(ctJSON), Text("[]"))
		id := s.newSubID()
		a, b := s.Name("a"), s.Name("b")
		Expect(s.sendJSON("PUT", s.subURL(id), map[string]any{"type": "pull-wake", "streams": []string{a},
			"wake_stream": wake.Name})).To(HaveStatus(201))
		Expect(s.sendJSON("POST", s.subURL(id, "streams"), map[string]any{"streams": []string{b}})).To(HaveStatus(204))
		Expect(s.sendJSON("POST", s.subURL(id, "streams"), map[string]any{"streams": []string{b}})).To(HaveStatus(204))
		Expect(subLinks(jsonMap(s.Do("GET", s.subURL(id))))).To(HaveKey(b))
		Expect(s.Do("DELETE", s.subURL(id, "streams", url.PathEscape(b)))).To(HaveStatus(204))
		Expect(s.Do("DELETE", s.subURL(id, "streams", url.PathEscape(b)))).To(HaveStatus(204))
		links := subLinks(jsonMap(s.Do("GET", s.subURL(id))))
		Expect(links).NotTo(HaveKey(b))
		Expect(links).To(HaveKey(a))
		Expect(links[a]).To(HaveKeyWithValue("link_type", "explicit"))
	})

	ConformanceIt(MUST, Reqs{"B-7-01", "B-7-05", "B-7-06", "B-12.9-01"}, "pull-wake: writes wake events, leases claims, fences stale acks and releases", func(s *S) {
		wake := s.Create("wake", CT(ctJSON), Text("[]"))
		data := s.Create("data", CT(ctText))
		id := s.newSubID()
		Expect(s.sendJSON("PUT", s.subURL(id), map[string]any{"type": "pull-wake", "streams": []string{data.Name},
			"wake_stream": wake.Name, "lease_ttl_ms": 30000})).To(HaveStatus(201))
		tail := data.Post(CT(ctText), Text("hello")).Get(hNextOffset)
		Eventually(s.Ctx, func() string { return s.Do("GET", wake.URL, Q("offset", offsetStart)).Text() }).
			WithTimeout(3*time.Second).WithPolling(25*time.Millisecond).Should(ContainSubstring(id), "a wake event naming the subscription")
		r := s.sendJSON("POST", s.subURL(id, "claim"), map[string]any{"worker": "w1"})
		Expect(r).To(HaveStatus(200))
		claim := jsonMap(r)
		Expect(claim).To(HaveKey("wake_id"))
		Expect(claim).To(HaveKey("token"))
		Expect(claim["generation"]).To(BeNumerically(">=", 1))
		Expect(r.Text()).To(ContainSubstring(tail), "the claim's streams carry the tail")
		r = s.sendJSON("POST", s.subURL(id, "claim"), map[string]any{"worker": "w2"})
		Expect(r).To(HaveStatus(409))
		Expect(errCode(r)).To(Equal("ALREADY_CLAIMED"))
		Expect(r.Text()).To(ContainSubstring(`"current_holder":"w1"`))
		tok := claim["token"].(string)
		ack := map[string]any{"wake_id": claim["wake_id"], "generation": claim["generation"],
			"acks": []map[string]string{{"stream": data.Name, "offset": tail}}, "done": true}
		Expect(s.sendJSON("POST", s.subURL(id, "ack"), ack, H("Authorization", "Bearer not-a-token"))).To(HaveStatus(401))
		Expect(s.sendJSON("POST", s.subURL(id, "ack"), ack)).To(HaveStatus(401), "no token")
		r = s.sendJSON("POST", s.subURL(id, "ack"), ack, H("Authorization", "Bearer "+tok))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody(`{"ok":true,"next_wake":false}`))
		r = s.sendJSON("POST", s.subURL(id, "ack"), ack, H("Authorization", "Bearer "+tok))
		Expect(r).To(HaveStatus(409))
		Expect(errCode(r)).To(Equal("FENCED"))
		Expect(subLinks(jsonMap(s.Do("GET", s.subURL(id))))[data.Name]).To(HaveKeyWithValue("acked_offset", tail))
		data.Post(CT(ctText), Text("more"))
		r = s.sendJSON("POST", s.subURL(id, "claim"), map[string]any{"worker": "w1"})
		Expect(r).To(HaveStatus(200), "a claim right after an append sees the pending work")
		c2 := jsonMap(r)
		Expect(c2["generation"]).To(BeNumerically(">", claim["generation"]))
		rel := map[string]any{"wake_id": c2["wake_id"], "generation": c2["generation"]}
		Expect(s.sendJSON("POST", s.subURL(id, "release"), rel, H("Authorization", "Bearer "+tok))).To(HaveStatus(409), "the old token is fenced")
		Expect(s.sendJSON("POST", s.subURL(id, "release"), rel, H("Authorization", "Bearer "+c2["token"].(string)))).To(HaveStatus(204))
	})

	ConformanceIt(MUST, Reqs{"B-7-02", "B-7-03"}, "webhook: signs deliveries and a done reply acks the wake's snapshot", func(s *S) {
		wr := s.newWebhookReceiver(`{"done":true}`)
		data := s.Create("data", CT(ctText))
		id := s.newSubID()
		doc := s.putWebhook(id, wr, []string{data.Name})
		signing, _ := doc["webhook"].(map[string]any)["signing"].(map[string]any)
		Expect(signing).To(HaveKeyWithValue("alg", "ed25519"))
		Expect(signing["jwks_url"]).To(Equal(s.subsRoot() + "jwks.json"))
		tail := data.Post(CT(ctText), Text("hello")).Get(hNextOffset)
		call, ok := wr.next(1, 5*time.Second)
		Expect(ok).To(BeTrue(), "a webhook delivery within 5 s")
		Expect(call.Header.Get("Webhook-Signature")).To(MatchRegexp(`^t=\d+,kid=.+,ed25519=[A-Za-z0-9_-]+$`))
		jwks := s.Do("GET", s.subsRoot()+"jwks.json").Data
		Expect(verifyWebhookSignature(call, jwks, time.Now())).To(Succeed())
		var p map[string]any
		Expect(json.Unmarshal(call.Body, &p)).To(Succeed())
		Expect(p).To(HaveKeyWithValue("subscription_id", id))
		Expect(p["callback_url"]).To(Equal(s.subURL(id, "callback")))
		Expect(string(call.Body)).To(ContainSubstring(`"has_pending":true`))
		Eventually(s.Ctx, func() any {
			return subLinks(jsonMap(s.Do("GET", s.subURL(id))))[data.Name]["acked_offset"]
		}).WithTimeout(3*time.Second).WithPolling(25*time.Millisecond).Should(Equal(tail), "done acks the snapshot's tail")
	})

	ConformanceIt(MUST, Reqs{"B-7-04", "B-7-06", "B-12.9-01"}, "webhook: the callback acks with its token and fences a repeat", func(s *S) {
		wr := s.newWebhookReceiver(`{}`)
		data := s.Create("data", CT(ctText))
		id := s.newSubID()
		s.putWebhook(id, wr, []string{data.Name})
		tail := data.Post(CT(ctText), Text("hello")).Get(hNextOffset)
		call, ok := wr.next(1, 5*time.Second)
		Expect(ok).To(BeTrue(), "a webhook delivery within 5 s")
		var p map[string]any
		Expect(json.Unmarshal(call.Body, &p)).To(Succeed())
		cb := map[string]any{"wake_id": p["wake_id"], "generation": p["generation"],
			"acks": []map[string]string{{"stream": data.Name, "offset": tail}}, "done": true}
		Expect(s.sendJSON("POST", p["callback_url"].(string), cb, H("Authorization", "Bearer x."+strings.Repeat("y", 8)))).To(HaveStatus(401))
		r := s.sendJSON("POST", p["callback_url"].(string), cb, H("Authorization", "Bearer "+p["callback_token"].(string)))
		Expect(r).To(HaveStatus(200))
		Expect(r).To(HaveBody(`{"ok":true,"next_wake":false}`))
		r = s.sendJSON("POST", p["callback_url"].(string), cb, H("Authorization", "Bearer "+p["callback_token"].(string)))
		Expect(r).To(HaveStatus(409))
		Expect(errCode(r)).To(Equal("FENCED"))
	})
})

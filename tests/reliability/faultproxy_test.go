package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault kinds of the proxy. "Applied" kinds forward the request to the S3
// server, which carries it out, and then lose or spoil the answer: from
// the client's side the outcome is unknown.
const (
	fault503Before  = "503 before forwarding"
	fault500After   = "500 after the server applied it"
	faultDropBefore = "connection dropped before forwarding"
	faultDropAfter  = "connection dropped after the server applied it"
	faultSlowBefore = "held beyond the client's time-out, then forwarded if the client still waits"
	faultSlowAfter  = "applied, answer held beyond the client's time-out"
	faultLateApply  = "held until the client gave up, then applied"
)

var faultKinds = []string{fault503Before, fault500After, faultDropBefore, faultDropAfter, faultSlowBefore, faultSlowAfter, faultLateApply}

// faultProxy is a loopback reverse proxy (net/http/httputil) in front of an
// S3 server that injects faults into a fraction of the requests. The
// request body is read first, so that a request can be forwarded whatever
// the client does meanwhile; the Host header is kept, since SigV4 signs it.
type faultProxy struct {
	target *url.URL
	rp     *httputil.ReverseProxy
	client *http.Client // for forwards that outlive the client's request
	srv    *http.Server
	ln     net.Listener
	// slow is how long slow faults hold a request: beyond the client's
	// request time-out.
	slow time.Duration

	mu      sync.Mutex
	rng     *rand.Rand
	rate    float64
	counts  map[string]int
	byOp    map[string]int // faults per "METHOD kind-of-object"
	total   int
	enabled atomic.Bool
	pending sync.WaitGroup // forwards still running after their client left
}

// newFaultProxy starts a proxy for the S3 endpoint on a loopback port.
func newFaultProxy(endpoint string, seed uint64, rate float64, slow time.Duration) (*faultProxy, error) {
	target, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &faultProxy{
		target: target, slow: slow, ln: ln,
		rng: rand.New(rand.NewPCG(seed, 99)), rate: rate,
		counts: map[string]int{}, byOp: map[string]int{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
	}
	p.rp = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host // SigV4 signed the proxy's host
		pr.Out.Header.Del("Expect")
	}}
	p.rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() == nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
	}
	p.srv = &http.Server{Handler: p}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's endpoint.
func (p *faultProxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy and waits for detached forwards.
func (p *faultProxy) Close() {
	_ = p.srv.Close()
	p.pending.Wait()
}

// pick decides the fault of one request ("" for none).
func (p *faultProxy) pick(r *http.Request) string {
	if !p.enabled.Load() {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total++
	if p.rng.Float64() >= p.rate {
		return ""
	}
	k := faultKinds[p.rng.IntN(len(faultKinds))]
	p.counts[k]++
	p.byOp[r.Method+" "+objectKind(r.URL.Path)]++
	return k
}

// objectKind classifies an S3 key for the figures.
func objectKind(key string) string {
	switch {
	case strings.Contains(key, "/snapshot/snapshot-"):
		return "snapshot"
	case strings.Contains(key, "/snapshot/"):
		return "hint"
	case strings.Contains(key, "/manifest/"):
		return "manifest"
	case strings.Contains(key, "/schema/"):
		return "schema"
	case strings.Contains(key, "/bucket-"):
		return "data file"
	default:
		return "listing or other"
	}
}

// Stats returns the faults injected by kind and by request, and the number
// of requests seen while enabled.
func (p *faultProxy) Stats() (byKind, byOp map[string]int, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	byKind, byOp = map[string]int{}, map[string]int{}
	for k, v := range p.counts {
		byKind[k] = v
	}
	for k, v := range p.byOp {
		byOp[k] = v
	}
	return byKind, byOp, p.total
}

// injected is the number of faults injected.
func (p *faultProxy) injected() int {
	k, _, _ := p.Stats()
	n := 0
	for _, v := range k {
		n += v
	}
	return n
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client left
	}
	kind := p.pick(r)
	switch kind {
	case "":
		p.forward(w, r, body)
	case fault503Before:
		s3Error(w, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate (injected).")
	case fault500After:
		p.apply(r, body)
		s3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error (injected).")
	case faultDropBefore:
		panic(http.ErrAbortHandler) // closes the connection without an answer
	case faultDropAfter:
		p.apply(r, body)
		panic(http.ErrAbortHandler)
	case faultSlowBefore:
		select {
		case <-time.After(p.slow):
			p.forward(w, r, body)
		case <-r.Context().Done():
		}
	case faultSlowAfter:
		resp := p.applyKeep(r, body)
		select {
		case <-time.After(p.slow):
		case <-r.Context().Done():
		}
		if resp != nil {
			copyResponse(w, resp)
		}
	case faultLateApply:
		select {
		case <-time.After(p.slow):
		case <-r.Context().Done():
		}
		p.pending.Add(1)
		go func() { // the server applies it after the client gave up
			defer p.pending.Done()
			p.apply(r, body)
		}()
		select {
		case <-r.Context().Done():
		case <-time.After(p.slow):
		}
	}
}

// forward passes the request on through the reverse proxy.
func (p *faultProxy) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	p.rp.ServeHTTP(w, r)
}

// apply sends the request to the server whatever the client does, and
// discards the answer.
func (p *faultProxy) apply(r *http.Request, body []byte) {
	if resp := p.applyKeep(r, body); resp != nil {
		resp.Body.Close()
	}
}

// applyKeep sends the request with a context of its own and returns the
// answer (body read into memory), nil if the server could not be reached.
func (p *faultProxy) applyKeep(r *http.Request, body []byte) *http.Response {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := *p.target
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil
	}
	out.Header = r.Header.Clone()
	out.Header.Del("Expect")
	out.Host = r.Host
	out.ContentLength = int64(len(body))
	resp, err := p.client.Do(out)
	if err != nil {
		return nil
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp
}

func copyResponse(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// s3Error answers with an S3 XML error.
func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>injected</RequestId></Error>`, code, msg)
}

// sortedCounts renders counts as "k: n" in key order.
func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

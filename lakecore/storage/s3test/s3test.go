// Package s3test gives tests a real S3 server and a fresh bucket on it.
//
// The server is, in order of preference:
//   - the one named by BP_S3_ENDPOINT (credentials BP_S3_ACCESS_KEY and
//     BP_S3_SECRET_KEY, default testkey/testsecret; region BP_S3_REGION,
//     default us-east-1), as CI provides with
//     `bash .ci/s3.sh install && eval "$(bash .ci/s3.sh start)"`;
//   - a versitygw started from <repo>/.ci/bin/versitygw on a free loopback
//     port with a temporary data directory, stopped when the test ends;
//   - none: the test is skipped with a message saying how to get one, or
//     fails if REQUIRE_S3=1.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Environment variables read by this package.
const (
	EnvEndpoint  = "BP_S3_ENDPOINT"
	EnvAccessKey = "BP_S3_ACCESS_KEY"
	EnvSecretKey = "BP_S3_SECRET_KEY"
	EnvRegion    = "BP_S3_REGION"
	// EnvRequire set to 1 turns the skip for a missing server into a failure.
	EnvRequire = testenv.RequireS3
)

// Default credentials, as .ci/s3.sh starts versitygw.
const (
	DefaultAccessKey = "testkey"
	DefaultSecretKey = "testsecret"
	DefaultRegion    = "us-east-1"
)

// versitygwPath is where `bash .ci/s3.sh install` puts the binary,
// relative to the repository root.
const versitygwPath = ".ci/bin/versitygw"

// Server returns the configuration of a running S3 server and the name of
// a bucket created for this test with the CreateBucket API. Call it once
// per top-level test and use NewBucket for more buckets on the same server.
func Server(t testing.TB) (storage.S3Config, string) {
	t.Helper()
	cfg := Endpoint(t)
	return cfg, NewBucket(t, cfg)
}

// Endpoint returns the configuration of a running S3 server (see the
// package comment), without creating a bucket.
func Endpoint(t testing.TB) storage.S3Config {
	t.Helper()
	if ep := os.Getenv(EnvEndpoint); ep != "" {
		return storage.S3Config{
			Endpoint:        ep,
			Region:          envOr(EnvRegion, DefaultRegion),
			ForcePathStyle:  true,
			AccessKeyID:     envOr(EnvAccessKey, DefaultAccessKey),
			SecretAccessKey: envOr(EnvSecretKey, DefaultSecretKey),
		}
	}
	root, err := repoRoot()
	if err != nil {
		noServer(t, err)
		return storage.S3Config{}
	}
	return endpointAt(t, root)
}

// endpointAt starts <root>/.ci/bin/versitygw, or skips (fails) without it.
func endpointAt(t testing.TB, root string) storage.S3Config {
	t.Helper()
	bin := filepath.Join(root, versitygwPath)
	if _, err := os.Stat(bin); err != nil {
		noServer(t, err)
		return storage.S3Config{}
	}
	return startVersitygw(t, bin)
}

// NoServerMessage starts the message of the skip (or failure) when no S3
// server is available.
const NoServerMessage = "s3test: no S3 server"

func noServer(t testing.TB, cause error) {
	t.Helper()
	testenv.Missingf(t, EnvRequire, "%s: set %s=http://host:port (with %s/%s, default %s/%s), "+
		"or build versitygw with `bash .ci/s3.sh install` in the repository root (creates %s; here: %v)",
		NoServerMessage, EnvEndpoint, EnvAccessKey, EnvSecretKey, DefaultAccessKey, DefaultSecretKey, versitygwPath, cause)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// repoRoot walks up from the working directory to the directory holding
// go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// startVersitygw runs bin on a free loopback port with a temporary posix
// data directory (t.TempDir is on a real filesystem here; the posix backend
// needs user xattrs) and stops it when the test ends.
func startVersitygw(t testing.TB, bin string) storage.S3Config {
	t.Helper()
	var lastErr error
	for range 3 { // a port taken between probe and bind: try another
		cfg, err := tryStart(t, bin)
		if err == nil {
			return cfg
		}
		lastErr = err
	}
	t.Fatalf("s3test: start %s: %v", bin, lastErr)
	return storage.S3Config{}
}

func tryStart(t testing.TB, bin string) (storage.S3Config, error) {
	port, err := freePort()
	if err != nil {
		return storage.S3Config{}, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	data := t.TempDir()
	out := &testenv.LockedBuffer{} // the server's output, for failure messages
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", data)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+DefaultAccessKey, "ROOT_SECRET_ACCESS_KEY="+DefaultSecretKey)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return storage.S3Config{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	endpoint := "http://" + addr
	if err := waitReady(endpoint, exited); err != nil {
		stop()
		return storage.S3Config{}, fmt.Errorf("%w; output:\n%s", err, out.String())
	}
	t.Cleanup(stop)
	return storage.S3Config{
		Endpoint:        endpoint,
		Region:          DefaultRegion,
		ForcePathStyle:  true,
		AccessKeyID:     DefaultAccessKey,
		SecretAccessKey: DefaultSecretKey,
	}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls until the server answers HTTP at all (403 without
// credentials), it exits, or 20 s pass.
func waitReady(endpoint string, exited <-chan error) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer at %s after 20 s: %w", endpoint, err)
		}
		select {
		case err := <-exited:
			return fmt.Errorf("server exited before answering: %v", err)
		case <-tick.C:
		}
	}
}

// NewBucket creates a bucket with a fresh name derived from the test name.
// On a server from BP_S3_ENDPOINT the bucket is emptied and removed when
// the test passes (kept for inspection when it fails); a server this
// package started is removed with all its data anyway.
func NewBucket(t testing.TB, cfg storage.S3Config) string {
	t.Helper()
	ctx := context.Background()
	client, err := storage.NewS3Client(ctx, cfg)
	if err != nil {
		t.Fatalf("s3test: client: %v", err)
	}
	name := bucketName(t.Name())
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("s3test: create bucket %s at %s: %v", name, cfg.Endpoint, err)
	}
	if os.Getenv(EnvEndpoint) != "" {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("s3test: keeping bucket %s at %s for inspection", name, cfg.Endpoint)
				return
			}
			if err := removeBucket(ctx, client, name); err != nil {
				t.Logf("s3test: remove bucket %s: %v", name, err)
			}
		})
	}
	return name
}

// bucketName is "bp-<test name>-<random>", within S3's rules (3-63 of
// lowercase letters, digits and hyphens).
func bucketName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
				b.WriteByte('-')
			}
		}
	}
	base := strings.Trim(b.String(), "-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	var rnd [5]byte
	_, _ = rand.Read(rnd[:])
	if base == "" {
		return "bp-" + hex.EncodeToString(rnd[:])
	}
	return "bp-" + base + "-" + hex.EncodeToString(rnd[:])
}

func removeBucket(ctx context.Context, client *s3.Client, bucket string) error {
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
				return err
			}
		}
	}
	_, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return err
}

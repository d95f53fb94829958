package s3test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

func TestNoServer(t *testing.T) {
	t.Setenv(EnvEndpoint, "")
	for _, require := range []string{"", "1"} {
		t.Setenv(EnvRequire, require)
		r := &testenv.Recorder{TB: t}
		endpointAt(r, t.TempDir()) // no .ci/bin/versitygw there
		got := r.SkipMessage
		if require == "1" {
			got = r.FatalMessage
			if r.SkipMessage != "" {
				t.Fatalf("REQUIRE_S3=1 skipped: %s", r.SkipMessage)
			}
		} else if r.FatalMessage != "" {
			t.Fatalf("failed without REQUIRE_S3: %s", r.FatalMessage)
		}
		for _, want := range []string{NoServerMessage, "BP_S3_ENDPOINT", "bash .ci/s3.sh install", ".ci/bin/versitygw", "REQUIRE_S3=1"} {
			if !strings.Contains(got, want) {
				t.Fatalf("REQUIRE_S3=%q: message %q lacks %q", require, got, want)
			}
		}
	}
}

func TestBucketName(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	for _, name := range []string{"TestX", "TestConformance/s3/prefix=\"\"/RoundTrip", strings.Repeat("Ü", 100), "", "---"} {
		b := bucketName(name)
		if !re.MatchString(b) || strings.Contains(b, "--") {
			t.Errorf("bucketName(%q) = %q", name, b)
		}
		if b == bucketName(name) {
			t.Errorf("bucketName(%q) is not fresh", name)
		}
	}
}

// TestServer starts (or finds) a server and checks the bucket is usable
// with signed requests.
func TestServer(t *testing.T) {
	cfg, bucket := Server(t)
	ctx := context.Background()
	client, err := storage.NewS3Client(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("bucket %s: %v", bucket, err)
	}
	other := NewBucket(t, cfg)
	if other == bucket {
		t.Fatal("NewBucket returned the same name")
	}
}

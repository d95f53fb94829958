package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// responseError builds the error the SDK returns for an HTTP answer.
func responseError(status int, code string) error {
	var err error = &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code, Message: "m"},
	}
	return &smithy.OperationError{ServiceID: "S3", OperationName: "PutObject", Err: err}
}

func sendError(err error) error {
	return &smithy.OperationError{ServiceID: "S3", OperationName: "PutObject", Err: &smithyhttp.RequestSendError{Err: err}}
}

func TestClassifyExclusive(t *testing.T) {
	tests := []struct {
		name string
		err  error
		sent bool
		want exclusiveOutcome
	}{
		{"nil", nil, true, exclusiveCreated},
		{"412", responseError(412, "PreconditionFailed"), true, exclusiveExists},
		{"409 conflict", responseError(409, "ConditionalRequestConflict"), true, exclusiveConflict},
		{"409 other", responseError(409, "ObjectParentIsFile"), true, exclusiveFailed},
		{"403", responseError(403, "AccessDenied"), true, exclusiveFailed},
		{"404 bucket", responseError(404, "NoSuchBucket"), true, exclusiveFailed},
		{"400 timeout", responseError(400, "RequestTimeout"), true, exclusiveFailed},
		{"301", responseError(301, "PermanentRedirect"), true, exclusiveFailed},
		{"500", responseError(500, "InternalError"), true, exclusiveAmbiguous},
		{"503", responseError(503, "SlowDown"), true, exclusiveAmbiguous},
		{"200 unreadable", responseError(200, ""), true, exclusiveAmbiguous},
		{"reset", sendError(&net.OpError{Op: "read", Err: syscall.ECONNRESET}), true, exclusiveAmbiguous},
		{"deadline", sendError(context.DeadlineExceeded), true, exclusiveAmbiguous},
		{"canceled while sending", fmt.Errorf("op: %w", context.Canceled), true, exclusiveAmbiguous},
		{"refused", sendError(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true, exclusiveNotSent},
		{"dns", sendError(&net.DNSError{Err: "no such host", Name: "x"}), true, exclusiveNotSent},
		{"credentials", errors.New("failed to retrieve credentials"), false, exclusiveNotSent},
	}
	for _, tc := range tests {
		if got := classifyExclusive(tc.err, tc.sent); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestIsNotFound(t *testing.T) {
	for err, want := range map[error]bool{
		responseError(404, "NoSuchKey"):    true,
		responseError(404, "NotFound"):     true,
		responseError(404, ""):             true, // HEAD
		responseError(404, "NoSuchBucket"): false,
		responseError(403, "AccessDenied"): false,
		errors.New("x"):                    false,
	} {
		if isNotFound(err) != want {
			t.Errorf("isNotFound(%v) = %v", err, !want)
		}
	}
}

func TestMultipartETag(t *testing.T) {
	// The parts' MD5s are those of "a" and "b"; the expected value was
	// computed independently:
	// printf 0cc1...2661 92eb...578f | xxd -r -p | md5sum
	parts := []types.CompletedPart{
		{ETag: aws.String(`"0cc175b9c0f1b6a831c399e269772661"`)},
		{ETag: aws.String(`"92eb5ffee6ae2fec3ad71c777531578f"`)},
	}
	if got, ok := multipartETag(parts); !ok || got != "96e024ba2074fe77e8e965ba43a704be-2" {
		t.Fatalf("multipartETag = %q, %v", got, ok)
	}
	if _, ok := multipartETag([]types.CompletedPart{{ETag: aws.String("not-md5")}}); ok {
		t.Fatal("accepted a non-MD5 ETag")
	}
}

func TestS3WriterBufferGrowth(t *testing.T) {
	const part = 5 << 20
	tests := []struct {
		name    string
		writes  []int
		wantCap int
	}{
		{"small file", []int{100}, minPartBuffer},
		{"one chunk", []int{minPartBuffer}, minPartBuffer},
		{"doubles", []int{minPartBuffer, 1}, 2 * minPartBuffer},
		{"large write", []int{1, 300 << 10}, 300<<10 + 1},
		{"capped at the part", []int{4 << 20, 1 << 20}, part},
		{"exactly a part", []int{part}, part},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &s3Writer{s: &S3{cfg: S3Config{PartSize: part}}}
			total := 0
			for i, n := range tc.writes {
				p := bytes.Repeat([]byte{byte(i + 1)}, n)
				w.appendBuf(p)
				total += n
				if !bytes.Equal(w.buf[total-n:], p) {
					t.Fatalf("write %d: buffer does not end with the bytes written", i)
				}
			}
			if len(w.buf) != total || cap(w.buf) != tc.wantCap {
				t.Fatalf("len %d cap %d, want %d and %d", len(w.buf), cap(w.buf), total, tc.wantCap)
			}
		})
	}
}

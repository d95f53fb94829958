package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"testing"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func TestIsPermanent(t *testing.T) {
	status := func(code int) error {
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("x")}
	}
	api := func(code string) error { return fmt.Errorf("list s3://b/p: %w", &smithy.GenericAPIError{Code: code}) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"missing bucket", api("NoSuchBucket"), true},
		{"access denied", api("AccessDenied"), true},
		{"unknown key id", api("InvalidAccessKeyId"), true},
		{"bad signature", api("SignatureDoesNotMatch"), true},
		{"wrong region", api("PermanentRedirect"), true},
		{"403 without a code (HEAD)", status(403), true},
		{"401", status(401), true},
		{"missing object", api("NoSuchKey"), false},
		{"slow down", api("SlowDown"), false},
		{"internal error", api("InternalError"), false},
		{"503", status(503), false},
		{"500", status(500), false},
		{"404", status(404), false},
		{"connection refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{"timeout", context.DeadlineExceeded, false},
		{"local permission", fmt.Errorf("open x: %w", fs.ErrPermission), true},
		{"unsupported scheme", fmt.Errorf("%w: hdfs", ErrUnsupportedScheme), true},
		{"missing file", fmt.Errorf("read x: %w", ErrNotExist), false},
		{"ambiguous write", fmt.Errorf("write x: %w", ErrAmbiguous), false},
	} {
		if got := IsPermanent(tc.err); got != tc.want {
			t.Errorf("%s: IsPermanent(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

package storage

import (
	"errors"
	"io/fs"
	"net"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// httpStatus is the HTTP status of a failed S3 call, 0 if no response
// arrived.
func httpStatus(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		return re.HTTPStatusCode()
	}
	return 0
}

// apiCode is the S3 error code ("NoSuchKey", "PreconditionFailed"), "" if
// none (HEAD responses have no body).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isNotFound reports a missing object. A missing bucket is not a missing
// object (NoSuchBucket is a configuration error that must surface), except
// on HEAD, whose 404 carries no code to tell them apart.
func isNotFound(err error) bool {
	switch apiCode(err) {
	case "NoSuchKey", "NotFound":
		return true
	case "NoSuchBucket":
		return false
	}
	return httpStatus(err) == 404
}

// isDialError reports a connection that was never established, so no
// request reached the server.
func isDialError(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && (oe.Op == "dial" || oe.Op == "proxyconnect") {
		return true
	}
	var de *net.DNSError
	return errors.As(err, &de)
}

type exclusiveOutcome int

const (
	exclusiveCreated   exclusiveOutcome = iota
	exclusiveExists                     // 412: someone else's object is there
	exclusiveConflict                   // 409 ConditionalRequestConflict: not applied, may retry
	exclusiveNotSent                    // never reached the server: not applied
	exclusiveFailed                     // the server refused it: not applied
	exclusiveAmbiguous                  // may or may not have been applied
)

// classifyExclusive maps the result of one conditional PUT (made without
// SDK retries); sent tells whether the request reached the HTTP client.
func classifyExclusive(err error, sent bool) exclusiveOutcome {
	if err == nil {
		return exclusiveCreated
	}
	status := httpStatus(err)
	switch {
	case status == 412 || apiCode(err) == "PreconditionFailed":
		return exclusiveExists
	case status == 409 && apiCode(err) == "ConditionalRequestConflict":
		return exclusiveConflict
	case status >= 200 && status < 300:
		// The server answered success but the answer could not be read.
		return exclusiveAmbiguous
	case status >= 500:
		return exclusiveAmbiguous
	case status >= 300:
		return exclusiveFailed
	case !sent || isDialError(err):
		return exclusiveNotSent
	default:
		return exclusiveAmbiguous
	}
}

// permanentCodes are the S3 error codes of a request that retrying cannot
// fix: the bucket is missing or misnamed, the credentials are refused or
// lack the permission, the bucket is in another region.
var permanentCodes = map[string]bool{
	"NoSuchBucket": true, "InvalidBucketName": true, "AccessDenied": true, "AllAccessDisabled": true,
	"InvalidAccessKeyId": true, "SignatureDoesNotMatch": true, "InvalidToken": true, "ExpiredToken": true,
	"AuthorizationHeaderMalformed": true, "PermanentRedirect": true,
}

// IsPermanent reports whether err, from any FileIO, is one that retrying
// the same operation cannot fix: a missing bucket, access denied (S3
// codes as permanentCodes, or HTTP 401, 403 or 301 without a code; a local
// fs.ErrPermission), an unsupported scheme or an invalid path. Time-outs,
// refused connections, throttling and 5xx answers are not: they are worth
// retrying.
func IsPermanent(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, ErrUnsupportedScheme) || errors.Is(err, ErrInvalidPath) {
		return true
	}
	if code := apiCode(err); code != "" {
		return permanentCodes[code]
	}
	switch httpStatus(err) {
	case 401, 403, 301:
		return true
	}
	return false
}

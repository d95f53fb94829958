package javatext_test

import (
	"math"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/javatext"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Expected strings are what Java 21 prints (partition names and CAST AS
// STRING); lakecore/binrow's partition tests check more through names.
func TestFormatDoubleAndFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {-2.5, "-2.5"},
		{1234567, "1234567.0"}, {9999999.5, "9999999.5"}, {1e7, "1.0E7"}, {12345678.9, "1.23456789E7"},
		{0.001, "0.001"}, {0.0001, "1.0E-4"}, {300.000000001, "300.000000001"},
		{math.MaxFloat64, "1.7976931348623157E308"}, {math.SmallestNonzeroFloat64, "4.9E-324"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
	} {
		if got := javatext.FormatDouble(tc.f); got != tc.want {
			t.Errorf("FormatDouble(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
	for _, tc := range []struct {
		f    float32
		want string
	}{
		{5.11, "5.11"}, {1e10, "1.0E10"}, {math.SmallestNonzeroFloat32, "1.4E-45"}, {-0.001, "-0.001"},
	} {
		if got := javatext.FormatFloat(tc.f); got != tc.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestFormatDateTime(t *testing.T) {
	ts := types.Timestamp{Millis: 1_717_070_400_123, NanoOfMilli: 456_000} // 2024-05-30T12:00:00.123456
	for _, tc := range []struct{ got, want string }{
		{javatext.FormatDate(0), "1970-01-01"},
		{javatext.FormatDate(-1), "1969-12-31"},
		{javatext.FormatDate(19873), "2024-05-30"},
		{javatext.FormatTime(0, 0), "00:00:00"},
		{javatext.FormatTime(45_296_100, 3), "12:34:56.1"},
		{javatext.FormatTime(45_296_000, 3), "12:34:56.0"},
		{javatext.FormatTime(45_296_789, 2), "12:34:56.78"},
		{javatext.FormatTimestamp(ts, 3), "2024-05-30 12:00:00.123456"},
		{javatext.FormatTimestamp(ts, 9), "2024-05-30 12:00:00.123456000"},
		{javatext.FormatTimestamp(types.Timestamp{Millis: 1_717_070_400_000}, 0), "2024-05-30 12:00:00"},
		{javatext.FormatTimestamp(types.Timestamp{Millis: 1_717_070_400_000}, 3), "2024-05-30 12:00:00.000"},
		{javatext.FormatLocalDateTime(types.Timestamp{Millis: 1_717_070_400_000}), "2024-05-30T12:00"},
		{javatext.FormatLocalDateTime(ts), "2024-05-30T12:00:00.123456"},
		{javatext.FormatLocalDateTime(types.Timestamp{Millis: -1}), "1969-12-31T23:59:59.999"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

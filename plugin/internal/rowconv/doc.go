// Package rowconv converts between Benthos messages and Paimon table rows, in
// both directions, for the paimon output and input.
//
// Converter (convert.go) turns a structured message into a row of the Go
// values lakecore/types defines, naming the offending field on failure and
// reporting top-level fields that could become new columns (schema
// evolution). RenderRow and NewRowMessage (render.go) are the exact inverse:
// they render a row read from a table as a structured message whose values
// the Converter maps back to the same row, plus the paimon_* metadata.
//
// The package is internal to plugin/ so both plugins share one definition of
// the mapping without importing each other (imports flow main -> plugin/* ->
// config -> lakecore).
package rowconv

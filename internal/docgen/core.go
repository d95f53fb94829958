package docgen

// benthosCore lists, by component kind, the components Benthos' own
// bundles register (public/components/pure and public/components/io of
// benthos v4.60.0, the version go.mod pins). Those are documented on
// Benthos' and Redpanda Connect's sites; every other component of an
// environment is this project's and gets a page. TestBenthosCoreList
// checks the list against an environment holding only those bundles, so
// a Benthos upgrade that adds or removes a component fails there rather
// than here, silently.
var benthosCore = map[string][]string{
	"buffer":     {"memory", "none", "system_window"},
	"cache":      {"file", "lru", "memory", "multilevel", "noop", "ttlru"},
	"input":      {"batched", "broker", "csv", "dynamic", "file", "generate", "http_client", "http_server", "inproc", "read_until", "resource", "sequence", "socket", "socket_server", "stdin", "subprocess", "websocket"},
	"metrics":    {"json_api", "logger", "none"},
	"output":     {"broker", "cache", "drop", "drop_on", "dynamic", "fallback", "file", "http_client", "http_server", "inproc", "reject", "reject_errored", "resource", "retry", "socket", "stdout", "subprocess", "switch", "sync_response", "websocket"},
	"processor":  {"archive", "benchmark", "bloblang", "bounds_check", "branch", "cache", "cached", "catch", "command", "compress", "crash", "decompress", "dedupe", "for_each", "grok", "group_by", "group_by_value", "http", "insert_part", "jmespath", "jq", "json_schema", "log", "mapping", "metric", "mutation", "noop", "parallel", "parse_log", "processors", "rate_limit", "resource", "retry", "select_parts", "sleep", "split", "subprocess", "switch", "sync_response", "try", "unarchive", "while", "workflow"},
	"rate_limit": {"local"},
	"scanner":    {"chunker", "csv", "decompress", "json_array", "json_documents", "lines", "re_match", "skip_bom", "switch", "tar", "to_the_end"},
	"tracer":     {"none"},
}

// isBenthosCore reports whether the component kind/name is one of
// benthosCore.
func isBenthosCore(kind, name string) bool {
	for _, n := range benthosCore[kind] {
		if n == name {
			return true
		}
	}
	return false
}

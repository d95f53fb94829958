// Package cdcformat decodes change-data-capture JSON envelopes (Debezium,
// Canal, Maxwell, Oracle GoldenGate) into rows with row kinds, the way
// Paimon's kafka_sync_table action reads them, for the paimon output's
// cdc_format field.
//
// It mirrors apache/paimon release-1.4.2,
// paimon-flink/paimon-flink-cdc/src/main/java/org/apache/paimon/flink/action/cdc/:
// format/AbstractJsonRecordParser.java, format/debezium/DebeziumJsonRecordParser.java,
// format/debezium/DebeziumSchemaUtils.java, format/canal/CanalRecordParser.java,
// format/canal/CanalFieldParser.java, format/maxwell/MaxwellRecordParser.java,
// format/ogg/OggRecordParser.java and mysql/MySqlTypeUtils.java.
//
// Decode is a function of the message alone; DecodeValue takes a message
// already parsed. A Decoder decodes like Decode and caches the parsed
// Debezium schema that Kafka Connect repeats in every message, several times
// faster on such streams. DebeziumKeyFields reads the key columns from a
// Debezium record key.
//
// # Row kinds
//
// Paimon never emits -U/+U from these formats. Every parser turns an update
// into a DELETE of the old row followed by an INSERT of the new one, and so
// does Decode:
//
//   - insert (Debezium "c", Canal "INSERT", Maxwell "insert", OGG "I"): +I of
//     the new row. Debezium's snapshot read "r" and Canal's "ROW" are inserts
//     too.
//   - update (Debezium "u", Canal "UPDATE", Maxwell "update", OGG "U"): -D
//     then +I. The -D row of Debezium, Canal and Maxwell is the new row with
//     the fields of the old image laid over it (mergeOldRecord), because those
//     formats may send only the changed columns as the old image (Canal and
//     Maxwell "old", Debezium "before"); OGG's -D row is "before" as sent. The
//     old image is required: an update without it is an error, as in Paimon.
//   - delete (Debezium "d", Canal "DELETE", Maxwell "delete", OGG "D"): -D of
//     the old row (Debezium and OGG "before"; Canal and Maxwell "data").
//
// Canal's "data" is an array: each element becomes its own changes, in
// order, paired with the element of "old" at the same index for updates.
//
// # Events without rows
//
// An empty message, or the JSON literal null, is a Kafka tombstone (Debezium
// sends one after each delete); Paimon skips it, and Decode returns an empty
// Event without error. A Canal event with "isDdl": true, and (unlike Paimon,
// which fails on them) a Maxwell schema-change event ("database-create",
// "table-alter", ...), has no changes and carries its statement in
// Event.DDL. Debezium's truncate ("t") and message ("m") operations, Maxwell's
// bootstrap events and OGG's truncate are errors, as in Paimon.
//
// # Values
//
// Row values are in the forms plugin/internal/rowconv accepts for the column
// type Event.Fields gives them, without any converter setting: JSON numbers
// stay json.Number (never float64), strings stay strings, nested objects and
// arrays stay structured. Debezium's encoded types are decoded per the
// envelope's schema; see debezium.go. Canal's values are text, with the
// few conversions of canal.go.
package cdcformat

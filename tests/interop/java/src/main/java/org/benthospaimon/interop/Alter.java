package org.benthospaimon.interop;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.schema.SchemaChange;

/** ALTER TABLE through Catalog.alterTable (SchemaManager.commitChanges), for the Go side's alter checks. */
final class Alter {

    private Alter() {}

    /**
     * Applies changes, a JSON array of ["set", key, value], ["reset", key] and ["add", name, type], in order, as
     * one schema change.
     */
    static void alter(Catalog catalog, Identifier id, String changesJson) throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode c : new ObjectMapper().readTree(changesJson)) {
            String kind = c.path(0).asText();
            switch (kind) {
                case "set":
                    changes.add(SchemaChange.setOption(c.path(1).asText(), c.path(2).asText()));
                    break;
                case "reset":
                    changes.add(SchemaChange.removeOption(c.path(1).asText()));
                    break;
                case "add":
                    changes.add(SchemaChange.addColumn(c.path(1).asText(), TypeParser.parse(c.path(2).asText())));
                    break;
                default:
                    throw new IllegalArgumentException("unknown change " + kind);
            }
        }
        catalog.alterTable(id, changes, false);
    }
}

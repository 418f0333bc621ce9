# Tests of the coll area.

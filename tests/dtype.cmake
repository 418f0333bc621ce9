# Tests of the dtype area.

# Tests of the comm area.

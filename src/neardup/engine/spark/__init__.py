"""The engine's stages on Apache Spark (the ``spark`` extra): the same stage functions inside
Spark's map, join and iterative stages, with outputs identical to the local engine."""

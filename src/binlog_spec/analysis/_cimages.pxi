# The row images of analysis/_ccollector.pyx stepped over by their layouts (rows.walker's plans), no value read
# (included: the loop's module; cimports there).


cdef class _Image:
    """One image layout of rows.walker._Plan: per present column its fixed size and length-prefix size."""
    cdef Py_ssize_t n, n_null
    cdef long long *fixed
    cdef int *prefix

    def __cinit__(self, plan):
        cdef Py_ssize_t k
        layouts = plan.layouts
        self.n = len(layouts)
        self.n_null = plan.n_null
        self.fixed = <long long *>PyMem_Malloc(max(self.n, 1) * sizeof(long long))
        self.prefix = <int *>PyMem_Malloc(max(self.n, 1) * sizeof(int))
        if self.fixed == NULL or self.prefix == NULL:
            raise MemoryError()
        for k in range(self.n):
            f, p = layouts[k]
            if not 0 <= p <= 8 or f < 0:
                raise ValueError("layout out of range")
            self.fixed[k] = f
            self.prefix[k] = p

    def __dealloc__(self):
        PyMem_Free(self.fixed)
        PyMem_Free(self.prefix)

    cdef inline Py_ssize_t skip(self, const unsigned char* p, Py_ssize_t pos, Py_ssize_t end) noexcept:
        """The position after the image at pos (as _Plan.skip), or -1 where it runs past `end` (the
        reference then fails too: positions only grow)."""
        cdef const unsigned char* nulls = p + pos
        cdef Py_ssize_t k
        cdef int size
        if pos + self.n_null > end:
            return -1
        pos += self.n_null
        for k in range(self.n):
            if (nulls[k >> 3] >> (k & 7)) & 1:
                continue
            size = self.prefix[k]
            if size:
                if pos + size > end:
                    return -1
                pos += size + <Py_ssize_t>_le(p + pos, size)
            else:
                pos += self.fixed[k]
            if pos > end or pos < 0:
                return -1
        return pos


cdef inline bint _any_bit(bytes bitmap, Py_ssize_t n):
    cdef const unsigned char* q = <const unsigned char*>PyBytes_AS_STRING(bitmap)
    cdef Py_ssize_t k
    for k in range(n):
        if (q[k >> 3] >> (k & 7)) & 1:
            return True
    return False

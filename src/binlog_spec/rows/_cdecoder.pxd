# What rows/_cdecoder.pyx shares with the other compiled modules (cimport): the image decoder's layout and
# `key_walk`, the one step over a row image that reads its integer key columns without decoding a value (the
# rollback's key check through `image_keys`, the rows lane's --key check, output/_crow_key.pxi).

cdef class ImageDecoder:
    cdef Py_ssize_t n, n_null
    cdef int *kinds
    cdef long long *params      # 3 per column
    cdef tuple names
    cdef tuple objs
    cdef tuple _decode(self, bytes buf, Py_ssize_t pos)
    cdef tuple _value(self, int kind, const long long *prm, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                      Py_ssize_t k)


cdef Py_ssize_t key_walk(ImageDecoder image, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                         const Py_ssize_t *slot, unsigned long long *out, bint check) except -2
cdef Py_ssize_t *key_slots(ImageDecoder image, tuple key) except NULL

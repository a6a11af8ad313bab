# The KeySet of output/rollback/_ccheck.pyx (included there, compiled with it as one module): the undone
# integer keys of a rollback's conflict check, each with its first change.

#: Entries of a KeySet at most (12 bytes each, and 5 per key): past 3/4 of them it takes no more keys.
MAX_SLOTS = 1 << 21
cdef uint32_t EMPTY = 0xFFFFFFFF


cdef inline uint64_t _mix(uint64_t x) noexcept:
    x ^= x >> 33
    x *= <uint64_t>0xff51afd7ed558ccd
    x ^= x >> 33
    x *= <uint64_t>0xc4ceb9fe1a85ec53
    x ^= x >> 33
    return x


cdef inline uint64_t _bits(object v) except? 0:
    """An integer key value as 64 bits (two's complement for a negative one: a column is signed or
    not, so within one table's key the map is one to one)."""
    if v < 0:
        return <uint64_t>(<int64_t>v)
    return <uint64_t>v


cdef class KeySet:
    """(slot, integer value) -> the first undone change of that row: its key number (the order it was
    first added in), its transaction's number and its change (0 INSERT, 1 UPDATE, 2 DELETE), and whether
    a conflict was reported for it. `full` once it would pass `limit` entries: then it takes no more (the
    keys in it stay)."""
    cdef uint64_t* vals
    cdef uint32_t* idx          # (key number << 8 | slot), EMPTY: a free entry
    cdef uint32_t* origin       # per key number: transaction number << 2 | change
    cdef unsigned char* reported
    cdef Py_ssize_t size, used, limit, room
    cdef public bint full

    def __cinit__(self, Py_ssize_t limit=MAX_SLOTS):
        self.limit = limit
        self.size = self.used = self.room = 0
        self.full = False
        self.vals = NULL
        self.idx = NULL
        self.origin = NULL
        self.reported = NULL
        if limit < 4 or limit & (limit - 1):
            raise ValueError("a KeySet's limit is a power of two")
        self._alloc(min(1 << 12, limit))

    def __dealloc__(self):
        free(self.vals)
        free(self.idx)
        free(self.origin)
        free(self.reported)

    def __len__(self):
        return self.used

    cdef int _alloc(self, Py_ssize_t size) except -1:
        cdef Py_ssize_t i
        self.vals = <uint64_t*>malloc(size * sizeof(uint64_t))
        self.idx = <uint32_t*>malloc(size * sizeof(uint32_t))
        if self.vals == NULL or self.idx == NULL:
            raise MemoryError()
        for i in range(size):
            self.idx[i] = EMPTY
        self.size = size
        return 0

    cdef int _grow(self) except -1:
        """Twice the entries (False: past the limit, then `full`)."""
        cdef uint64_t* vals = self.vals
        cdef uint32_t* idx = self.idx
        cdef Py_ssize_t size = self.size, i, j
        cdef uint64_t mask
        if size * 2 > self.limit:
            self.full = True
            return 0
        self._alloc(size * 2)
        mask = self.size - 1
        for i in range(size):
            if idx[i] != EMPTY:
                j = _mix(vals[i] * <uint64_t>0x9e3779b97f4a7c15 + (idx[i] & 0xFF)) & mask
                while self.idx[j] != EMPTY:
                    j = (j + 1) & mask
                self.vals[j] = vals[i]
                self.idx[j] = idx[i]
        free(vals)
        free(idx)
        return 1

    cdef inline Py_ssize_t _where(self, uint32_t slot, uint64_t v) noexcept:
        """The entry of (slot, v), or the free entry where it goes."""
        cdef uint64_t mask = self.size - 1
        cdef Py_ssize_t i = _mix(v * <uint64_t>0x9e3779b97f4a7c15 + slot) & mask
        cdef uint32_t r
        while True:
            r = self.idx[i]
            if r == EMPTY or (self.vals[i] == v and (r & 0xFF) == slot):
                return i
            i = (i + 1) & mask

    cdef int _put(self, uint32_t slot, uint64_t v, uint32_t origin) except -1:
        """(slot, v) added unless in (0: full, nothing added)."""
        cdef Py_ssize_t i
        cdef void* grown
        if (self.used + 1) * 4 > self.size * 3:
            if not self._grow():
                return 0
        i = self._where(slot, v)
        if self.idx[i] != EMPTY:
            return 1
        if self.used >= self.room:
            self.room = max(1024, self.room * 2)
            grown = realloc(self.origin, self.room * sizeof(uint32_t))
            if grown == NULL:
                raise MemoryError()
            self.origin = <uint32_t*>grown
            grown = realloc(self.reported, self.room)
            if grown == NULL:
                raise MemoryError()
            self.reported = <unsigned char*>grown
        self.vals[i] = v
        self.idx[i] = (<uint32_t>self.used << 8) | slot
        self.origin[self.used] = origin
        self.reported[self.used] = 0
        self.used += 1
        return 1

    def add(self, int slot, list got, bint update, Py_ssize_t tx, int change):
        """The keys of rows/_cdecoder.pyx image_keys' list (one integer each; an UPDATE's before then after
        image, the after one when it differs), undone by change `change` of transaction `tx`, in order;
        a key already in keeps its first change. False once full (the keys before it are in)."""
        cdef Py_ssize_t k, count = len(got)
        cdef uint32_t origin = (<uint32_t>tx << 2) | <uint32_t>change
        if self.full:
            return False
        if not 0 <= slot < 256 or not 0 <= tx < (1 << 30) or self.used + count >= (1 << 24):
            self.full = True
            return False
        k = 0
        while k < count:
            if not self._put(slot, _bits(got[k][0]), origin):
                return False
            if update:
                if got[k + 1] != got[k] and not self._put(slot, _bits(got[k + 1][0]), origin):
                    return False
                k += 2
            else:
                k += 1
        return True

    cdef inline long long find(self, uint32_t slot, uint64_t v) noexcept:
        cdef Py_ssize_t i
        if self.size == 0:
            return -1
        i = self._where(slot, v)
        return -1 if self.idx[i] == EMPTY else <long long>(self.idx[i] >> 8)

    def first(self, int slot, v):
        """(transaction number, change) of the first undone change of the row (slot, v) when no
        conflict was reported for it yet (it is from now on), False when one was, None: not undone."""
        cdef long long k = self.find(slot, _bits(v))
        if k < 0:
            return None
        if self.reported[k]:
            return False
        self.reported[k] = 1
        return (self.origin[k] >> 2, self.origin[k] & 3)

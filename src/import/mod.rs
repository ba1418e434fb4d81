//! Real registrar feeds -> canonical price source. (Being written: see issue 3.)

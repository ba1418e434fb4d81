//! Keys, plans, credits and rate limits. (Being written: see issues 4 and 5.)

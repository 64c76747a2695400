/** Creation and update times of every entity: set by the ORM on insert (and update), `now()` for rows SQL inserts. */
export const now = () => new Date();

CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL);
CREATE TABLE purchase (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id),
                       product_id INTEGER REFERENCES product(id), quantity INTEGER NOT NULL);
INSERT INTO customer VALUES (1, 'Ada', 'London'), (2, 'Grace', 'New York'), (3, 'Alan', 'London'), (4, 'Edsger', 'Austin');
INSERT INTO product VALUES (1, 'lamp', 25.0), (2, 'desk', 180.0), (3, 'chair', 75.5), (4, 'pen', 2.5);
INSERT INTO purchase VALUES (1, 1, 1, 2), (2, 1, 4, 10), (3, 2, 2, 1), (4, 3, 3, 4), (5, 4, 4, 3), (6, 2, 1, 1);

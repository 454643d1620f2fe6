"""The six bundled SQL databases (schema + deterministic rows), used by build_sql_data.py.

Each database is a dict: {"ddl": [CREATE TABLE ...], "rows": {table: [tuple, ...]}} in creation order.
"""

from __future__ import annotations

import random


def _date(rnd: random.Random, year_from: int, year_to: int) -> str:
    return f"{rnd.randint(year_from, year_to)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}"


def university() -> dict:
    rnd = random.Random(101)
    ddl = [
        """CREATE TABLE department (
  dept_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  building TEXT,
  budget INTEGER
)""",
        """CREATE TABLE instructor (
  instructor_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  dept_id INTEGER REFERENCES department(dept_id),
  salary INTEGER,
  hire_year INTEGER
)""",
        """CREATE TABLE student (
  student_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  dept_id INTEGER REFERENCES department(dept_id),
  year INTEGER,
  gpa REAL
)""",
        """CREATE TABLE course (
  course_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  dept_id INTEGER REFERENCES department(dept_id),
  credits INTEGER,
  instructor_id INTEGER REFERENCES instructor(instructor_id)
)""",
        """CREATE TABLE enrollment (
  student_id INTEGER REFERENCES student(student_id),
  course_id INTEGER REFERENCES course(course_id),
  semester TEXT,
  grade TEXT,
  PRIMARY KEY (student_id, course_id)
)""",
    ]
    departments = [
        (1, "Computer Science", "Turing Hall", 950000),
        (2, "Mathematics", "Euler Hall", 620000),
        (3, "Physics", "Curie Hall", 780000),
        (4, "History", "Gibbon Hall", 410000),
        (5, "Biology", "Darwin Hall", 705000),
        (6, "Economics", "Smith Hall", 530000),
        (7, "Philosophy", "Gibbon Hall", 255000),
    ]
    instructors = [
        (1, "Ada Linwood", 1, 128000, 2009),
        (2, "Alan Kerr", 1, 119500, 2012),
        (3, "Grace Hollis", 1, 134000, 2005),
        (4, "Emmy Nolan", 2, 112000, 2010),
        (5, "Srinivasa Rao", 2, 98500, 2016),
        (6, "Lise Marten", 3, 121000, 2008),
        (7, "Richard Feynor", 3, 109000, 2014),
        (8, "Mary Bard", 4, 87000, 2011),
        (9, "Eric Hobson", 4, 79500, 2019),
        (10, "Rosalind Frey", 5, 115500, 2007),
        (11, "Gregor Mendez", 5, 91000, 2018),
        (12, "John Kearns", 6, 104000, 2013),
        (13, "Elinor Osgood", 6, 117000, 2006),
        (14, "Hannah Arlen", 7, 83500, 2015),
    ]
    first = ["Liam", "Olivia", "Noah", "Emma", "Mateo", "Ava", "Lucas", "Mia", "Ethan", "Sofia", "Arjun", "Chloe",
             "Kenji", "Zara", "Omar", "Isla", "Felix", "Nora", "Hugo", "Leah", "Ivan", "Maya", "Tariq", "Elena",
             "Yusuf", "Grace", "Diego", "Hana", "Theo", "Amara", "Jonas", "Priya"]
    last = ["Smith", "Garcia", "Chen", "Muller", "Okafor", "Rossi", "Novak", "Kim", "Silva", "Haddad", "Patel",
            "Dubois", "Tanaka", "Ahmed", "Jensen", "Moreau", "Kowalski", "Ibrahim", "Lopez", "Berg", "Petrov",
            "Singh", "Nasser", "Costa", "Demir", "Walsh", "Reyes", "Sato", "Fischer", "Mensah", "Larsen", "Iyer"]
    gpas = rnd.sample([x / 100 for x in range(200, 401, 3)], 32)
    students = []
    for i in range(32):
        dept = [1, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 4, 1, 2, 3][i % 16] if i < 30 else 7
        students.append((i + 1, f"{first[i]} {last[i]}", dept, 1 + (i * 7) % 4, gpas[i]))
    courses = [
        (101, "Introduction to Programming", 1, 4, 2),
        (102, "Data Structures", 1, 4, 1),
        (103, "Databases", 1, 3, 3),
        (104, "Machine Learning", 1, 4, 1),
        (201, "Calculus I", 2, 4, 5),
        (202, "Linear Algebra", 2, 3, 4),
        (203, "Abstract Algebra", 2, 3, 4),
        (301, "Classical Mechanics", 3, 4, 7),
        (302, "Quantum Physics", 3, 4, 6),
        (401, "Ancient Rome", 4, 3, 8),
        (402, "Modern Europe", 4, 3, 9),
        (501, "Genetics", 5, 4, 10),
        (502, "Cell Biology", 5, 3, 11),
        (601, "Microeconomics", 6, 3, 12),
        (602, "Public Economics", 6, 3, 13),
        (701, "Ethics", 7, 2, 14),
    ]
    enrollments = []
    grades = ["A", "A", "B", "B", "B", "C", "C", "D", "F"]
    course_ids = [c[0] for c in courses if c[0] != 701]  # nobody takes Ethics
    for s in students:
        if s[0] in (31, 32):  # two students without enrollments
            continue
        k = 2 + s[0] % 3
        for c in rnd.sample(course_ids, k):
            semester = rnd.choice(["Fall 2023", "Spring 2024", "Fall 2024"])
            grade = None if semester == "Fall 2024" and rnd.random() < 0.5 else rnd.choice(grades)
            enrollments.append((s[0], c, semester, grade))
    return {
        "ddl": ddl,
        "rows": {
            "department": departments,
            "instructor": instructors,
            "student": students,
            "course": courses,
            "enrollment": enrollments,
        },
    }


def retail() -> dict:
    rnd = random.Random(202)
    ddl = [
        """CREATE TABLE supplier (
  supplier_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT
)""",
        """CREATE TABLE product (
  product_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  category TEXT,
  price REAL,
  stock INTEGER,
  supplier_id INTEGER REFERENCES supplier(supplier_id)
)""",
        """CREATE TABLE customer (
  customer_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT,
  country TEXT,
  signup_date TEXT
)""",
        """CREATE TABLE orders (
  order_id INTEGER PRIMARY KEY,
  customer_id INTEGER REFERENCES customer(customer_id),
  order_date TEXT,
  status TEXT
)""",
        """CREATE TABLE order_item (
  order_id INTEGER REFERENCES orders(order_id),
  product_id INTEGER REFERENCES product(product_id),
  quantity INTEGER,
  unit_price REAL,
  PRIMARY KEY (order_id, product_id)
)""",
    ]
    suppliers = [
        (1, "Nordic Goods", "Sweden"),
        (2, "Pacific Traders", "Japan"),
        (3, "Andes Supply", "Peru"),
        (4, "Rhine Industrial", "Germany"),
        (5, "Maple Wholesale", "Canada"),
        (6, "Sahara Imports", "Morocco"),
    ]
    products = [
        (1, "Espresso Machine", "Kitchen", 249.99, 12, 4),
        (2, "Chef Knife", "Kitchen", 89.5, 40, 2),
        (3, "Cast Iron Pan", "Kitchen", 54.0, 33, 5),
        (4, "Tea Kettle", "Kitchen", 39.95, 0, 1),
        (5, "Wool Blanket", "Home", 79.0, 25, 1),
        (6, "Desk Lamp", "Home", 45.25, 18, 4),
        (7, "Ceramic Vase", "Home", 32.0, 7, 3),
        (8, "Scented Candle", "Home", 14.99, 120, 5),
        (9, "Running Shoes", "Sports", 119.0, 30, 2),
        (10, "Yoga Mat", "Sports", 29.99, 65, 3),
        (11, "Tennis Racket", "Sports", 159.0, 9, 4),
        (12, "Water Bottle", "Sports", 18.5, 200, 5),
        (13, "Wireless Headphones", "Electronics", 199.0, 22, 2),
        (14, "Smart Watch", "Electronics", 299.0, 15, 2),
        (15, "USB-C Charger", "Electronics", 24.99, 150, 4),
        (16, "Bluetooth Speaker", "Electronics", 89.0, 0, 2),
        (17, "Hiking Backpack", "Outdoors", 134.5, 14, 1),
        (18, "Camping Tent", "Outdoors", 349.0, 5, 5),
        (19, "Headlamp", "Outdoors", 27.75, 48, 3),
        (20, "Sleeping Bag", "Outdoors", 99.99, 11, 1),
    ]
    cities = [("Toronto", "Canada"), ("Vancouver", "Canada"), ("Berlin", "Germany"), ("Munich", "Germany"),
              ("Lyon", "France"), ("Paris", "France"), ("Osaka", "Japan"), ("Tokyo", "Japan"),
              ("Lima", "Peru"), ("Boston", "USA"), ("Chicago", "USA"), ("Austin", "USA")]
    names = ["Harper Lewis", "Miles Novak", "Aiko Tanaka", "Bruno Costa", "Clara Schmidt", "Dev Malhotra",
             "Elif Aydin", "Finn O'Brien", "Gabriela Ruiz", "Henrik Larsen", "Ines Ferreira", "Jomo Kamau",
             "Kira Volkova", "Luis Ortega", "Mei Lin", "Nadia Haddad", "Oscar Wendt", "Paula Becker",
             "Quentin Bale", "Rosa Pardo", "Sven Eriksson", "Tara Singh"]
    customers = []
    for i, name in enumerate(names):
        city, country = cities[(i * 5) % len(cities)]
        customers.append((i + 1, name, city, country, _date(rnd, 2021, 2023)))
    statuses = ["delivered"] * 5 + ["shipped"] * 2 + ["cancelled", "pending"]
    orders = []
    buyers = [c[0] for c in customers if c[0] not in (19, 20, 21, 22)]  # four customers never ordered
    for oid in range(1, 46):
        cid = rnd.choice(buyers)
        orders.append((1000 + oid, cid, _date(rnd, 2023, 2024), rnd.choice(statuses)))
    items = []
    sold = [p for p in products if p[0] not in (7, 18)]  # two products never sold
    for o in orders:
        for p in rnd.sample(sold, rnd.randint(1, 4)):
            items.append((o[0], p[0], rnd.randint(1, 5), p[3]))
    return {
        "ddl": ddl,
        "rows": {"supplier": suppliers, "product": products, "customer": customers, "orders": orders,
                 "order_item": items},
    }


def library() -> dict:
    rnd = random.Random(303)
    ddl = [
        """CREATE TABLE author (
  author_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  nationality TEXT,
  birth_year INTEGER
)""",
        """CREATE TABLE book (
  book_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  author_id INTEGER REFERENCES author(author_id),
  genre TEXT,
  pub_year INTEGER,
  pages INTEGER
)""",
        """CREATE TABLE member (
  member_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT,
  join_year INTEGER
)""",
        """CREATE TABLE loan (
  loan_id INTEGER PRIMARY KEY,
  book_id INTEGER REFERENCES book(book_id),
  member_id INTEGER REFERENCES member(member_id),
  loan_date TEXT,
  return_date TEXT
)""",
    ]
    authors = [
        (1, "Jane Austen", "British", 1775),
        (2, "Leo Tolstoy", "Russian", 1828),
        (3, "Chinua Achebe", "Nigerian", 1930),
        (4, "Gabriel Garcia Marquez", "Colombian", 1927),
        (5, "Toni Morrison", "American", 1931),
        (6, "Haruki Murakami", "Japanese", 1949),
        (7, "Virginia Woolf", "British", 1882),
        (8, "Fyodor Dostoevsky", "Russian", 1821),
        (9, "Isabel Allende", "Chilean", 1942),
        (10, "Ursula K. Le Guin", "American", 1929),
        (11, "Kazuo Ishiguro", "British", 1954),
        (12, "Octavia Butler", "American", 1947),
    ]
    books = [
        (1, "Pride and Prejudice", 1, "Romance", 1813, 432),
        (2, "Emma", 1, "Romance", 1815, 474),
        (3, "Persuasion", 1, "Romance", 1817, 249),
        (4, "War and Peace", 2, "Historical", 1869, 1225),
        (5, "Anna Karenina", 2, "Romance", 1878, 864),
        (6, "Things Fall Apart", 3, "Literary", 1958, 209),
        (7, "No Longer at Ease", 3, "Literary", 1960, 194),
        (8, "One Hundred Years of Solitude", 4, "Magical Realism", 1967, 417),
        (9, "Love in the Time of Cholera", 4, "Romance", 1985, 348),
        (10, "Beloved", 5, "Historical", 1987, 324),
        (11, "Song of Solomon", 5, "Literary", 1977, 337),
        (12, "Norwegian Wood", 6, "Literary", 1987, 296),
        (13, "Kafka on the Shore", 6, "Magical Realism", 2002, 505),
        (14, "1Q84", 6, "Magical Realism", 2009, 928),
        (15, "Mrs Dalloway", 7, "Literary", 1925, 196),
        (16, "To the Lighthouse", 7, "Literary", 1927, 210),
        (17, "Crime and Punishment", 8, "Literary", 1866, 671),
        (18, "The Brothers Karamazov", 8, "Literary", 1880, 796),
        (19, "The House of the Spirits", 9, "Magical Realism", 1982, 433),
        (20, "The Left Hand of Darkness", 10, "Science Fiction", 1969, 304),
        (21, "The Dispossessed", 10, "Science Fiction", 1974, 387),
        (22, "A Wizard of Earthsea", 10, "Fantasy", 1968, 183),
        (23, "The Remains of the Day", 11, "Literary", 1989, 258),
        (24, "Never Let Me Go", 11, "Science Fiction", 2005, 288),
        (25, "Kindred", 12, "Science Fiction", 1979, 264),
        (26, "Parable of the Sower", 12, "Science Fiction", 1993, 345),
    ]
    members = [
        (1, "Alice Moreno", "Springfield", 2018),
        (2, "Ben Carter", "Riverton", 2019),
        (3, "Chloe Nguyen", "Springfield", 2020),
        (4, "Daniel Osei", "Lakeside", 2017),
        (5, "Eva Lindqvist", "Riverton", 2021),
        (6, "Farid Rahimi", "Springfield", 2016),
        (7, "Gina Russo", "Lakeside", 2022),
        (8, "Hassan Ali", "Riverton", 2020),
        (9, "Ingrid Holm", "Springfield", 2023),
        (10, "Jamal Brooks", "Hillview", 2019),
        (11, "Keiko Mori", "Hillview", 2021),
        (12, "Lars Nilsen", "Lakeside", 2018),
        (13, "Marta Kowal", "Springfield", 2024),
        (14, "Nikhil Rao", "Hillview", 2022),
        (15, "Olga Ivanova", "Riverton", 2024),
    ]
    loans = []
    borrowers = [m[0] for m in members if m[0] not in (13, 15)]
    lendable = [b[0] for b in books if b[0] not in (7, 22, 25)]
    for lid in range(1, 61):
        y, mth, d = 2023 + (lid > 35), rnd.randint(1, 11), rnd.randint(1, 20)
        loan_date = f"{y}-{mth:02d}-{d:02d}"
        if lid > 52 or rnd.random() < 0.1:
            ret = None
        else:
            ret = f"{y}-{mth + 1:02d}-{min(28, d + rnd.randint(0, 8)):02d}"
        loans.append((lid, rnd.choice(lendable), rnd.choice(borrowers), loan_date, ret))
    return {"ddl": ddl, "rows": {"author": authors, "book": books, "member": members, "loan": loans}}


def flights() -> dict:
    rnd = random.Random(404)
    ddl = [
        """CREATE TABLE airport (
  code TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT,
  country TEXT
)""",
        """CREATE TABLE airline (
  airline_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT,
  founded INTEGER
)""",
        """CREATE TABLE flight (
  flight_id INTEGER PRIMARY KEY,
  flight_number TEXT,
  airline_id INTEGER REFERENCES airline(airline_id),
  origin TEXT REFERENCES airport(code),
  destination TEXT REFERENCES airport(code),
  distance_km INTEGER,
  duration_min INTEGER
)""",
        """CREATE TABLE passenger (
  passenger_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  nationality TEXT,
  birth_year INTEGER
)""",
        """CREATE TABLE booking (
  booking_id INTEGER PRIMARY KEY,
  flight_id INTEGER REFERENCES flight(flight_id),
  passenger_id INTEGER REFERENCES passenger(passenger_id),
  travel_date TEXT,
  seat_class TEXT,
  price REAL
)""",
    ]
    airports = [
        ("JFK", "John F. Kennedy International", "New York", "USA"),
        ("LAX", "Los Angeles International", "Los Angeles", "USA"),
        ("ORD", "O'Hare International", "Chicago", "USA"),
        ("LHR", "Heathrow", "London", "United Kingdom"),
        ("CDG", "Charles de Gaulle", "Paris", "France"),
        ("FRA", "Frankfurt am Main", "Frankfurt", "Germany"),
        ("NRT", "Narita International", "Tokyo", "Japan"),
        ("SYD", "Kingsford Smith", "Sydney", "Australia"),
        ("DXB", "Dubai International", "Dubai", "United Arab Emirates"),
        ("GRU", "Guarulhos International", "Sao Paulo", "Brazil"),
        ("YYZ", "Pearson International", "Toronto", "Canada"),
    ]
    airlines = [
        (1, "SkyBridge Airways", "USA", 1986),
        (2, "Atlantic Crown", "United Kingdom", 1972),
        (3, "Blue Lotus Air", "Japan", 1995),
        (4, "Southern Cross Airlines", "Australia", 2001),
        (5, "Falcon Gulf", "United Arab Emirates", 1989),
        (6, "Aurora Connect", "Canada", 2010),
    ]
    # (airline, origin, destination, distance, duration)
    routes = [
        (1, "JFK", "LAX", 3983, 330), (1, "LAX", "JFK", 3984, 305), (1, "JFK", "ORD", 1188, 155),
        (1, "ORD", "LAX", 2802, 265), (1, "JFK", "LHR", 5540, 420), (2, "LHR", "JFK", 5541, 475),
        (2, "LHR", "CDG", 344, 75), (2, "LHR", "FRA", 654, 100), (2, "LHR", "DXB", 5500, 415),
        (3, "NRT", "LAX", 8756, 610), (3, "NRT", "SYD", 7823, 570), (3, "LAX", "NRT", 8757, 690),
        (4, "SYD", "NRT", 7824, 585), (4, "SYD", "LAX", 12051, 830), (4, "SYD", "DXB", 12039, 860),
        (5, "DXB", "LHR", 5501, 445), (5, "DXB", "FRA", 4842, 400), (5, "DXB", "SYD", 12040, 835),
        (5, "DXB", "GRU", 12196, 880), (5, "DXB", "CDG", 5245, 430), (6, "YYZ", "LHR", 5705, 420),
        (6, "YYZ", "JFK", 587, 95), (6, "YYZ", "ORD", 702, 110), (6, "ORD", "YYZ", 703, 100),
        (2, "CDG", "LHR", 345, 80), (1, "ORD", "JFK", 1189, 130),
    ]
    codes = {1: "SB", 2: "AC", 3: "BL", 4: "SC", 5: "FG", 6: "AU"}
    flights_rows = []
    for i, (al, o, d, dist, dur) in enumerate(routes, start=1):
        flights_rows.append((i, f"{codes[al]}{100 + i * 7}", al, o, d, dist, dur))
    people = [("Amelia Hart", "USA", 1985), ("Bilal Khan", "Pakistan", 1979), ("Carmen Diaz", "Spain", 1992),
              ("Dmitri Orlov", "Russia", 1968), ("Ebony Grant", "USA", 2001), ("Felipe Souza", "Brazil", 1974),
              ("Greta Weber", "Germany", 1988), ("Hiro Yamada", "Japan", 1995), ("Ifeoma Obi", "Nigeria", 1983),
              ("Jack Turner", "United Kingdom", 1961), ("Kalani Akana", "USA", 1999), ("Lena Fischer", "Germany", 1977),
              ("Mohammed Saleh", "United Arab Emirates", 1990), ("Nina Petrova", "Russia", 2003),
              ("Owen Clarke", "Australia", 1986), ("Pia Moreau", "France", 1994), ("Quinn Murphy", "Canada", 1981),
              ("Rin Saito", "Japan", 1972), ("Sara Lind", "Sweden", 1997), ("Tom Becker", "Canada", 1966)]
    passengers = [(i + 1, *p) for i, p in enumerate(people)]
    bookings = []
    flyers = [p[0] for p in passengers if p[0] not in (19, 20)]
    flown = [f for f in flights_rows if f[0] not in (24, 26)]
    for bid in range(1, 71):
        f = rnd.choice(flown)
        seat = rnd.choice(["economy"] * 6 + ["business"] * 2 + ["first"])
        factor = {"economy": 0.11, "business": 0.34, "first": 0.71}[seat]
        price = round(f[5] * factor + rnd.randint(0, 120) + rnd.random(), 2)
        bookings.append((bid, f[0], rnd.choice(flyers), _date(rnd, 2024, 2024), seat, price))
    return {"ddl": ddl, "rows": {"airport": airports, "airline": airlines, "flight": flights_rows,
                                 "passenger": passengers, "booking": bookings}}


def hospital() -> dict:
    rnd = random.Random(505)
    ddl = [
        """CREATE TABLE department (
  dept_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  floor INTEGER
)""",
        """CREATE TABLE doctor (
  doctor_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  specialty TEXT,
  dept_id INTEGER REFERENCES department(dept_id),
  years_experience INTEGER
)""",
        """CREATE TABLE patient (
  patient_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  birth_year INTEGER,
  sex TEXT,
  city TEXT
)""",
        """CREATE TABLE appointment (
  appointment_id INTEGER PRIMARY KEY,
  patient_id INTEGER REFERENCES patient(patient_id),
  doctor_id INTEGER REFERENCES doctor(doctor_id),
  appt_date TEXT,
  fee REAL,
  diagnosis TEXT
)""",
        """CREATE TABLE medication (
  medication_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  unit_price REAL
)""",
        """CREATE TABLE prescription (
  appointment_id INTEGER REFERENCES appointment(appointment_id),
  medication_id INTEGER REFERENCES medication(medication_id),
  dosage_mg INTEGER,
  days INTEGER,
  PRIMARY KEY (appointment_id, medication_id)
)""",
    ]
    departments = [(1, "Cardiology", 3), (2, "Neurology", 4), (3, "Pediatrics", 2), (4, "Orthopedics", 1),
                   (5, "Dermatology", 2), (6, "Oncology", 5)]
    doctors = [
        (1, "Dr. Amina Yusuf", "Cardiologist", 1, 21), (2, "Dr. Brian Cole", "Cardiologist", 1, 9),
        (3, "Dr. Chen Wei", "Neurologist", 2, 15), (4, "Dr. Dana Fox", "Neurologist", 2, 4),
        (5, "Dr. Elena Petrov", "Pediatrician", 3, 12), (6, "Dr. Femi Adeyemi", "Pediatrician", 3, 7),
        (7, "Dr. Gustav Lind", "Orthopedic Surgeon", 4, 25), (8, "Dr. Hina Qureshi", "Orthopedic Surgeon", 4, 6),
        (9, "Dr. Isaac Roth", "Dermatologist", 5, 18), (10, "Dr. Julia Santos", "Dermatologist", 5, 3),
        (11, "Dr. Kofi Mensah", "Oncologist", 6, 19), (12, "Dr. Laura Bianchi", "Neurologist", 2, 11),
    ]
    pnames = ["Aaron Blake", "Bianca Marino", "Caleb Young", "Daria Sokol", "Emeka Eze", "Fatima Zahra",
              "George Hall", "Hanna Kivi", "Ilya Markov", "Jasmine Reid", "Kai Nakamura", "Lucia Romero",
              "Marcus Webb", "Nour Said", "Olivia Shaw", "Pedro Alves", "Rania Aziz", "Stefan Horvat",
              "Tessa Quinn", "Umar Farooq", "Vera Lang", "Wei Zhang"]
    pcities = ["Riverside", "Hillcrest", "Bayview", "Riverside", "Oakdale", "Bayview", "Hillcrest"]
    patients = []
    for i, n in enumerate(pnames):
        patients.append((i + 1, n, 1940 + (i * 13) % 80, "F" if i % 2 else "M", pcities[i % len(pcities)]))
    diagnoses = {1: ["Hypertension", "Arrhythmia", "Angina"], 2: ["Migraine", "Epilepsy", "Neuropathy"],
                 3: ["Asthma", "Otitis", "Bronchiolitis"], 4: ["Fracture", "Sprain", "Arthritis"],
                 5: ["Eczema", "Psoriasis", "Acne"], 6: ["Lymphoma", "Melanoma"]}
    appointments = []
    seen_patients = [p[0] for p in patients if p[0] not in (21, 22)]
    busy = [d for d in doctors if d[0] != 10]  # Dr. Julia Santos has no appointments yet
    for aid in range(1, 61):
        d = rnd.choice(busy)
        fee = round(60 + d[4] * 4.5 + rnd.randint(0, 40) + rnd.randint(0, 99) / 100, 2)
        appointments.append((aid, rnd.choice(seen_patients), d[0], _date(rnd, 2023, 2024), fee,
                             rnd.choice(diagnoses[d[3]])))
    medications = [(1, "Lisinopril", 0.35), (2, "Atorvastatin", 0.52), (3, "Sumatriptan", 2.15),
                   (4, "Levetiracetam", 1.4), (5, "Albuterol", 0.95), (6, "Amoxicillin", 0.28),
                   (7, "Ibuprofen", 0.12), (8, "Hydrocortisone", 0.66), (9, "Methotrexate", 3.8),
                   (10, "Metformin", 0.18), (11, "Warfarin", 0.44)]
    by_dept = {1: [1, 2, 11], 2: [3, 4, 7], 3: [5, 6, 7], 4: [7], 5: [8, 9], 6: [9, 7]}
    prescriptions = []
    for a in appointments:
        dept = doctors[a[2] - 1][3]
        meds = by_dept[dept]
        for m in rnd.sample(meds, rnd.randint(0, min(2, len(meds)))):
            prescriptions.append((a[0], m, rnd.choice([5, 10, 20, 40, 200, 400]), rnd.choice([5, 7, 14, 30])))
    return {"ddl": ddl, "rows": {"department": departments, "doctor": doctors, "patient": patients,
                                 "appointment": appointments, "medication": medications,
                                 "prescription": prescriptions}}


def music() -> dict:
    rnd = random.Random(606)
    ddl = [
        """CREATE TABLE artist (
  artist_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT,
  formed_year INTEGER
)""",
        """CREATE TABLE album (
  album_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  artist_id INTEGER REFERENCES artist(artist_id),
  release_year INTEGER,
  genre TEXT
)""",
        """CREATE TABLE track (
  track_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  album_id INTEGER REFERENCES album(album_id),
  duration_sec INTEGER,
  plays INTEGER
)""",
        """CREATE TABLE playlist (
  playlist_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  owner TEXT
)""",
        """CREATE TABLE playlist_track (
  playlist_id INTEGER REFERENCES playlist(playlist_id),
  track_id INTEGER REFERENCES track(track_id),
  position INTEGER,
  PRIMARY KEY (playlist_id, track_id)
)""",
    ]
    artists = [
        (1, "The Velvet Owls", "United Kingdom", 1998), (2, "Luna Parade", "USA", 2008),
        (3, "Kiko Mori", "Japan", 2012), (4, "Desert Echo", "Morocco", 2003),
        (5, "Nordlys", "Norway", 1994), (6, "Samba Lenta", "Brazil", 2015),
        (7, "Ivory Coastline", "Ghana", 2010), (8, "Marta Quiroga", "Argentina", 2001),
        (9, "Static Bloom", "USA", 2018), (10, "The Hollow Pines", "Canada", 2006),
    ]
    albums = [
        (1, "Midnight Feathers", 1, 2001, "Rock"), (2, "Paper Moons", 1, 2007, "Rock"),
        (3, "Neon Harbor", 2, 2011, "Pop"), (4, "Glass Avenue", 2, 2016, "Pop"),
        (5, "Sakura Signals", 3, 2014, "Electronic"), (6, "Night Train Tokyo", 3, 2019, "Electronic"),
        (7, "Sand and Strings", 4, 2005, "World"), (8, "Aurora Tides", 5, 1997, "Ambient"),
        (9, "Polar Static", 5, 2004, "Ambient"), (10, "Carnival Slow", 6, 2017, "Latin"),
        (11, "Golden Shore", 7, 2013, "Afrobeat"), (12, "Tango for Two", 8, 2003, "Latin"),
        (13, "Bloom Season", 9, 2020, "Indie"), (14, "Feedback Garden", 9, 2022, "Indie"),
        (15, "Timberline", 10, 2009, "Folk"), (16, "Cabin Lights", 10, 2014, "Folk"),
        (17, "Second Winds", 1, 2021, "Rock"),
    ]
    words = ["Echo", "River", "Static", "Gold", "Silent", "Velvet", "Paper", "Neon", "Winter", "Desert", "Ocean",
             "Ember", "Hollow", "Signal", "Dream", "Shadow", "Glass", "Lantern", "Summer", "Thunder"]
    nouns = ["Heart", "Road", "Lights", "Dance", "Lines", "Rain", "Waves", "Sky", "Bloom", "Song", "Fire", "Door"]
    titles = set()
    tracks = []
    tid = 1
    plays_pool = rnd.sample(range(1200, 980000, 37), 80)
    for al in albums:
        for _ in range(rnd.randint(2, 4)):
            while True:
                t = f"{rnd.choice(words)} {rnd.choice(nouns)}"
                if t not in titles:
                    titles.add(t)
                    break
            tracks.append((tid, t, al[0], 150 + (tid * 37) % 240, plays_pool[tid - 1]))
            tid += 1
    playlists = [(1, "Morning Run", "maria"), (2, "Focus Flow", "ken"), (3, "Road Trip", "maria"),
                 (4, "Late Night", "sam"), (5, "Sunday Chill", "ken"), (6, "Empty Draft", "sam")]
    playlist_tracks = []
    for pl in playlists[:5]:
        chosen = rnd.sample([t[0] for t in tracks], rnd.randint(5, 9))
        for pos, t in enumerate(chosen, start=1):
            playlist_tracks.append((pl[0], t, pos))
    return {"ddl": ddl, "rows": {"artist": artists, "album": albums, "track": tracks, "playlist": playlists,
                                 "playlist_track": playlist_tracks}}


DATABASES = {
    "university": university,
    "retail": retail,
    "library": library,
    "flights": flights,
    "hospital": hospital,
    "music": music,
}
